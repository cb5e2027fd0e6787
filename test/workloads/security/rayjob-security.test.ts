import { describe, expect, it } from "vitest";
import type { RayJob } from "../../../workloads/k8s/types";
import { RAY_AUTH } from "../../../workloads/security/pods";
import { planStack } from "../../../workloads/stack";
import { configWith, repoStack, runtime } from "../../helpers/fixtures";
import { restrictedViolations } from "../../helpers/pod-security";

const jobsOf = (env: "dev" | "prod") =>
  planStack(repoStack(env), { runtime }).objects.flatMap((o) =>
    o.objects.filter((x): x is RayJob => x.kind === "RayJob"),
  );

const podsOf = (job: RayJob) => [
  job.spec.rayClusterSpec.headGroupSpec.template.spec,
  ...job.spec.rayClusterSpec.workerGroupSpecs.map((g) => g.template.spec),
  job.spec.submitterPodTemplate!.spec,
];

describe("every rendered RayJob is locked down", () => {
  for (const env of ["dev", "prod"] as const) {
    it(`${env}: Ray token authentication with a token of each job's own (KubeRay's, per RayCluster)`, () => {
      for (const job of jobsOf(env)) expect(job.spec.rayClusterSpec.authOptions, job.metadata.name).toEqual(RAY_AUTH);
    });

    it(`${env}: head, workers and submitter meet the Pod Security Standard restricted, with no API token`, () => {
      for (const job of jobsOf(env))
        for (const pod of podsOf(job)) {
          expect(restrictedViolations(pod), `${job.metadata.name}/${pod.containers[0]!.name}`).toEqual([]);
          expect(pod.automountServiceAccountToken).toBe(false);
        }
    });
  }

  it("the restricted check does catch a pod that breaks it (KubeRay's default submitter: no security context)", () => {
    const pod = {
      containers: [
        {
          name: "submitter",
          image: "rayproject/ray:2.58.0",
          resources: { requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "1", memory: "1Gi" } },
        },
      ],
    };
    expect(restrictedViolations(pod)).toHaveLength(4); // privilege escalation, capabilities, non-root, seccomp
  });
});

describe("secret environment variables", () => {
  const withSecrets = () =>
    configWith((c) => {
      c.workloads[0]!["secretEnv"] = {
        HF_TOKEN: { pulumiConfig: "hfToken" },
        WANDB_API_KEY: { secretName: "team-wandb", key: "api-key" },
      };
    });

  it("renders secretKeyRef on every Ray container, never a value", () => {
    const job = planStack(withSecrets(), { runtime }).objects[0]!.objects.find(
      (o): o is RayJob => o.kind === "RayJob",
    )!;
    for (const pod of podsOf(job).slice(0, 2)) {
      const env = pod.containers[0]!.env!;
      expect(env.find((e) => e.name === "HF_TOKEN")).toEqual({
        name: "HF_TOKEN",
        valueFrom: { secretKeyRef: { name: "train-secrets", key: "HF_TOKEN" } },
      });
      expect(env.find((e) => e.name === "WANDB_API_KEY")).toEqual({
        name: "WANDB_API_KEY",
        valueFrom: { secretKeyRef: { name: "team-wandb", key: "api-key" } },
      });
    }
  });
});
