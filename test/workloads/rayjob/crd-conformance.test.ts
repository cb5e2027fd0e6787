/**
 * Every emitted ray.io/v1 object against the official KubeRay v1.7.0 CRDs, as an API server with strict field
 * validation would check it. Skipped, with the reason, when the CRDs are not available.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { CrdConformance, crdDirectory } from "../../helpers/crd-conformance";
import { planStack } from "../../../workloads/stack";
import type { RayJob } from "../../../workloads/k8s/types";
import { repoStack, runtime } from "../../helpers/fixtures";

const where = crdDirectory();
const skip = "missing" in where;
if (skip) console.warn(`[crd-conformance] skipped: ${where.missing}`);

/** `prod-unqueued`: prod without Kueue, whose jobs keep their failed heads with deletionRules. */
type Variant = "dev" | "prod" | "prod-unqueued";
const rendered = (env: Variant) =>
  planStack(env === "prod-unqueued" ? repoStack("prod", { queueing: false }) : repoStack(env), { runtime })
    .objects.flatMap((o) => o.objects)
    .filter((o): o is RayJob => o.kind === "RayJob");

describe.skipIf(skip)(
  `CRD conformance against KubeRay v1.7.0 CRDs${skip ? ` (skipped: ${where.missing})` : ""}`,
  () => {
    let crds: CrdConformance;
    beforeAll(async () => {
      crds = await CrdConformance.load((where as { dir: string }).dir);
    });

    it.each(["dev", "prod", "prod-unqueued"] as const)("accepts every RayJob of the %s stack", (env) => {
      const jobs = rendered(env);
      expect(jobs.length).toBeGreaterThan(0);
      for (const job of jobs) expect(crds.validate(job), job.metadata.name).toEqual([]);
    });

    it.each(["dev", "prod", "prod-unqueued"] as const)(
      "accepts the RayCluster KubeRay creates from each %s RayJob",
      (env) => {
        for (const job of rendered(env)) {
          const cluster = {
            apiVersion: "ray.io/v1",
            kind: "RayCluster",
            metadata: { name: job.metadata.name, namespace: job.metadata.namespace },
            spec: job.spec.rayClusterSpec,
          };
          expect(crds.validate(cluster), job.metadata.name).toEqual([]);
        }
      },
    );

    it("rejects unknown fields, as strict field validation does", () => {
      const job = structuredClone(rendered("dev")[0]!) as unknown as Record<string, Record<string, unknown>>;
      job["spec"]!["microBatchSise"] = 4;
      (job["metadata"] as Record<string, unknown>)["lables"] = {};
      const errors = crds.validate(job);
      expect(errors).toContain('/spec: must NOT have additional properties "microBatchSise"');
      expect(errors).toContain('/metadata: must NOT have additional properties "lables"');
    });

    it("checks types and enums", () => {
      const job = structuredClone(rendered("prod-unqueued")[0]!);
      (job.spec as unknown as Record<string, unknown>)["backoffLimit"] = "2";
      (job.spec.deletionStrategy!.deletionRules[0] as unknown as Record<string, unknown>)["policy"] = "Delete";
      const errors = crds.validate(job);
      expect(errors).toContain("/spec/backoffLimit: must be integer");
      expect(errors).toContain(
        "/spec/deletionStrategy/deletionRules/0/policy: must be equal to one of the allowed values",
      );
    });

    it("evaluates the CRD's CEL rules (deletion rules need exactly one status field)", () => {
      const job = structuredClone(rendered("prod-unqueued")[0]!);
      job.spec.deletionStrategy!.deletionRules[0]!.condition = {
        jobStatus: "SUCCEEDED",
        jobDeploymentStatus: "Failed",
        ttlSeconds: 0,
      };
      job.spec.deletionStrategy!.deletionRules[1]!.condition = { ttlSeconds: 0 };
      const errors = crds.validate(job);
      expect(errors).toContain(
        "/spec/deletionStrategy/deletionRules[0]/condition: CEL rule failed: JobStatus and JobDeploymentStatus " +
          "cannot be used together within the same deletion condition.",
      );
      expect(errors).toContain(
        "/spec/deletionStrategy/deletionRules[1]/condition: CEL rule failed: the deletion condition requires " +
          "either the JobStatus or the JobDeploymentStatus field.",
      );
    });

    it("enforces list-map keys (two containers with one name)", () => {
      const job = structuredClone(rendered("dev")[0]!);
      const pod = job.spec.rayClusterSpec.workerGroupSpecs[0]!.template.spec;
      pod.containers.push(structuredClone(pod.containers[0]!));
      expect(crds.validate(job).some((e) => e.includes("duplicate entry") && e.includes("containers"))).toBe(true);
    });
  },
);
