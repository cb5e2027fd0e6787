import { describe, expect, it } from "vitest";
import { allViolations, networkPolicyViolations, RULES, type PolicyInput } from "../../policy/rules";
import { resourcePolicies, stackPolicy } from "../../policy/pack";
import { planStack } from "../../workloads/stack";
import { repoStack, runtime } from "../helpers/fixtures";

const rule = (name: string) => RULES.find((r) => r.name === name)!;
const RAYJOB = "kubernetes:ray.io/v1:RayJob";

/** The prod stack's rendered RayJobs as the policy engine sees them (types as @pulumi/kubernetes registers them). */
const rendered = (): PolicyInput[] =>
  planStack(repoStack("prod"), { runtime }).objects.flatMap((o) =>
    o.objects
      .filter((x) => x.kind === "RayJob")
      .map((x) => ({ type: RAYJOB, name: x.metadata.name, props: x as unknown as Record<string, unknown> })),
  );

/** Per AWS rule: an input it passes and one it catches. */
const AWS_RULE_CASES: readonly { rule: string; good: PolicyInput; bad: PolicyInput }[] = (
  [
    [
      "imdsv2-hop-limit-1",
      {
        type: "aws:ec2/launchTemplate:LaunchTemplate",
        name: "lt",
        props: { metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 1 } },
      },
      {
        type: "aws:ec2/launchTemplate:LaunchTemplate",
        name: "lt",
        props: { metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 } },
      },
    ],
    [
      "eks-audit-logging",
      {
        type: "aws:eks/cluster:Cluster",
        name: "c",
        props: { enabledClusterLogTypes: ["api", "audit", "authenticator"] },
      },
      { type: "aws:eks/cluster:Cluster", name: "c", props: { enabledClusterLogTypes: ["api"] } },
    ],
    [
      "eks-secrets-encryption",
      { type: "aws:eks/cluster:Cluster", name: "c", props: { encryptionConfig: { resources: ["secrets"] } } },
      { type: "aws:eks/cluster:Cluster", name: "c", props: {} },
    ],
    [
      "bucket-kms-encryption",
      {
        type: "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        name: "e",
        props: {
          rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: "arn:key" } }],
        },
      },
      {
        type: "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
        name: "e",
        props: { rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }] },
      },
    ],
    [
      "bucket-protected",
      { type: "aws:s3/bucket:Bucket", name: "b", props: { forceDestroy: false }, protect: true },
      { type: "aws:s3/bucket:Bucket", name: "b", props: { forceDestroy: true }, protect: false },
    ],
    [
      "no-wildcard-iam",
      {
        type: "aws:iam/rolePolicy:RolePolicy",
        name: "p",
        props: {
          policy: JSON.stringify({ Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: "*" }] }),
        },
      },
      {
        type: "aws:iam/rolePolicy:RolePolicy",
        name: "p",
        props: { policy: JSON.stringify({ Statement: [{ Effect: "Allow", Action: ["s3:*"], Resource: "*" }] }) },
      },
    ],
  ] satisfies [string, PolicyInput, PolicyInput][]
).map(([rule, good, bad]) => ({ rule, good, bad }));

describe("policy pack rules", () => {
  it("pass every RayJob the prod stack renders", () => {
    expect(allViolations(rendered()).filter((v) => !v.startsWith("network-policy-present"))).toEqual([]);
  });

  it("catch a RayJob without auth, with a GPU head, a plaintext token and a root container", () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- deep edits of a cloned fixture
    const job = structuredClone(rendered()[0]!) as PolicyInput & { props: any };
    delete job.props.spec.rayClusterSpec.authOptions;
    job.props.spec.rayClusterSpec.headGroupSpec.rayStartParams["num-gpus"] = "1";
    const head = job.props.spec.rayClusterSpec.headGroupSpec.template.spec;
    head.containers[0].env.push({ name: "HF_TOKEN", value: "hf_abcdefghijklmnopqrstuvwxyz" });
    delete head.containers[0].securityContext;
    delete head.securityContext;
    const found = (name: string) => rule(name).check(job);
    expect(found("ray-auth-token")).toHaveLength(1);
    expect(found("ray-head-no-gpu")).toHaveLength(1);
    expect(found("no-plaintext-secret-env")).toEqual([
      `RayJob ${job.name} (head): env HF_TOKEN is a plain secret-looking value; use valueFrom.secretKeyRef`,
    ]);
    expect(found("ray-pod-security")).toHaveLength(4);
  });

  it.each(AWS_RULE_CASES)(
    "check AWS resources: $rule passes the good input and catches the bad",
    ({ rule: name, good, bad }) => {
      expect(rule(name).check(good), name).toEqual([]);
      expect(rule(name).check(bad), name).toHaveLength(1);
    },
  );

  it("require a default-deny NetworkPolicy where RayJobs run", () => {
    const job: PolicyInput = { type: RAYJOB, name: "j", props: { metadata: { namespace: "ray-jobs" } } };
    const deny: PolicyInput = {
      type: "kubernetes:networking.k8s.io/v1:NetworkPolicy",
      name: "deny",
      props: { metadata: { namespace: "ray-jobs" }, spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] } },
    };
    expect(networkPolicyViolations([job])).toEqual([
      "namespace ray-jobs runs RayJobs without a default-deny NetworkPolicy",
    ]);
    expect(networkPolicyViolations([job, deny])).toEqual([]);
  });

  it("are wrapped for @pulumi/policy: reports go through its validate callbacks", async () => {
    const reported: string[] = [];
    const report = (m: string) => reported.push(m);
    const lt = resourcePolicies().find((p) => p.name === "imdsv2-hop-limit-1")!;
    const args = {
      type: "aws:ec2/launchTemplate:LaunchTemplate",
      name: "lt",
      props: { metadataOptions: {} },
      opts: { protect: false },
    };
    await (lt.validateResource as (a: unknown, r: typeof report) => void)(args, report);
    await (stackPolicy().validateStack as (a: unknown, r: typeof report) => void)(
      { resources: [{ type: RAYJOB, name: "j", props: {}, opts: {} }] },
      report,
    );
    expect(reported).toHaveLength(2);
  });
});
