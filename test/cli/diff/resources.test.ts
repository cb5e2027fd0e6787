/**
 * The resource half of `ray-gpu diff`: which preview changes are updates, replacements (direct, through a value taken
 * from a replaced resource, or cascading from the cluster) and losses of state.
 */
import { describe, expect, it } from "vitest";
import { diffResources, statefulLosses } from "../../../cli/diff/resources";
import { REPLACEMENT, coveredBy, replacementRule } from "../../../cli/diff/replacement";
import { COMMENT_LIMIT, diffMarkdown } from "../../../cli/diff/markdown";
import { diffPlans } from "../../../cli/diff/compare";
import type { StackReport } from "../../../cli/diff/summary";
import type { PreviewResource } from "../../../cli/preview/run";

const res = (type: string, name: string, inputs: Record<string, unknown>, extra: Partial<PreviewResource> = {}) =>
  ({ type, name, parent: null, inputs, ...extra }) as PreviewResource;

const BUCKET = "aws:s3/bucket:Bucket";
const CLUSTER = "aws:eks/cluster:Cluster";
const NODES = "aws:eks/nodeGroup:NodeGroup";

describe("diffResources", () => {
  it("tells an in-place update from a replacement, and names the input that forces it", () => {
    const base = [res(BUCKET, "b", { forceDestroy: false }), res(NODES, "ng", { scalingConfig: { maxSize: 2 } })];
    const head = [
      res(BUCKET, "b", { forceDestroy: false, bucket: "renamed" }),
      res(NODES, "ng", { scalingConfig: { maxSize: 4 } }),
    ];
    const changes = diffResources(base, head);
    expect(changes.map((c) => [c.name, c.status])).toEqual([
      ["ng", "updated"],
      ["b", "replaced"],
    ]);
    expect(changes[1]).toMatchObject({ replacedBecause: ["bucket"], loses: expect.stringContaining("bucket") });
    expect(changes[0]!.inputs).toEqual([{ path: "scalingConfig.maxSize", before: 2, after: 4 }]);
    expect(statefulLosses(changes).map((c) => c.name)).toEqual(["b"]);
  });

  it("replaces what takes a replace-forcing input from a replaced resource, and what lives on a replaced cluster", () => {
    const base = [
      res(CLUSTER, "eks", { name: "a", roleArn: "r1" }),
      res(NODES, "ng", { subnetIds: ["<computed: private subnet 1 of vpc>"], clusterName: "a" }),
      res("awsx:ec2:Vpc", "vpc", { cidrBlock: "10.0.0.0/16" }),
      res("kubernetes:core/v1:Namespace", "ns", { metadata: { name: "jobs" } }),
      res("aws:iam/role:Role", "role", { path: "/" }),
    ];
    const head = structuredClone(base);
    head[2]!.inputs["cidrBlock"] = "10.1.0.0/16";
    const changes = diffResources(base, head);
    const status = Object.fromEntries(changes.map((c) => [c.name, c.status]));
    expect(status).toEqual({ eks: "replaced", ng: "replaced", vpc: "replaced", ns: "replaced" });
    const ng = changes.find((c) => c.name === "ng")!;
    expect(ng.replacedBecause).toContain("subnetIds comes from vpc, which is replaced");
    expect(changes.find((c) => c.name === "eks")!.replacedBecause).toEqual(["it depends on vpc, which is replaced"]);
    expect(changes.find((c) => c.name === "ns")!.replacedBecause).toEqual(["it depends on vpc, which is replaced"]);
    expect(
      statefulLosses(changes)
        .map((c) => c.name)
        .sort(),
    ).toEqual(["eks", "ns", "vpc"]);
  });

  it("updates the cluster in place for what EKS changes in place, and replaces it when its encryption goes", () => {
    const base = [res(CLUSTER, "eks", { version: "1.35", encryptionConfig: { resources: ["secrets"] } })];
    const bump = structuredClone(base);
    bump[0]!.inputs["version"] = "1.36";
    expect(diffResources(base, bump).map((c) => c.status)).toEqual(["updated"]);
    const drop = structuredClone(base);
    delete drop[0]!.inputs["encryptionConfig"];
    expect(diffResources(base, drop)[0]).toMatchObject({
      status: "replaced",
      replacedBecause: ["encryptionConfig.resources removed"],
    });
  });

  it("counts a removal of state as a loss, a new parent as a replacement, and ignores what did not change", () => {
    const base = [
      res(CLUSTER, "eks", { name: "a" }, { protection: ["protect"] }),
      res("aws:iam/role:Role", "role", { path: "/" }, { parent: "p1" }),
      res("aws:iam/role:Role", "same", { path: "/" }),
    ];
    const head = [res("aws:iam/role:Role", "role", { path: "/" }, { parent: "p2" }), base[2]!];
    const changes = diffResources(base, head);
    expect(changes.map((c) => [c.name, c.status])).toEqual([
      ["eks", "removed"],
      ["role", "replaced"],
    ]);
    expect(changes[0]!.protection).toEqual(["protect"]);
    expect(changes[1]!.replacedBecause).toEqual(["parent p1 → p2"]);
  });

  it("replaces a RayJob whose spec changes (its own replaceOnChanges) and a ConfigMap whose data changes", () => {
    const job = (gpus: number) =>
      res("kubernetes:ray.io/v1:RayJob", "job", { spec: { gpus } }, { replaceOnChanges: ["spec"] });
    const cm = (v: string) => res("kubernetes:core/v1:ConfigMap", "cm", { data: { k: v } });
    const changes = diffResources([job(1), cm("a")], [job(2), cm("b")]);
    expect(changes.map((c) => [c.name, c.status, c.replacedBecause])).toEqual([
      ["cm", "replaced", ["data.k"]],
      ["job", "replaced", ["spec.gpus"]],
    ]);
  });

  it("shows a long value by its length and the part around the first difference", () => {
    const policy = (bucket: string) =>
      JSON.stringify({ Statement: [{ Resource: `arn:aws:s3:::${bucket}` }] }).padEnd(150);
    const base = [res("aws:iam/rolePolicy:RolePolicy", "p", { policy: policy("old-name") })];
    const head = [res("aws:iam/rolePolicy:RolePolicy", "p", { policy: policy("new-name") })];
    expect(diffResources(base, head)[0]!.inputs).toEqual([
      {
        path: "policy",
        before: '<150 characters: …":"arn:aws:s3:::old-name"}]}                            …>',
        after: '<150 characters: …":"arn:aws:s3:::new-name"}]}                            …>',
      },
    ]);
  });
});

describe("diffResources, the cluster and the network", () => {
  const vpc = (inputs: Record<string, unknown>) => res("awsx:ec2:Vpc", "vpc", inputs);
  const spec = (tag: string) => ({
    cidrMask: 19,
    type: "Private",
    tags: { [`kubernetes.io/cluster/${tag}`]: "shared" },
  });
  const ng = res(NODES, "ng", { subnetIds: ["<computed: private subnet 1 of vpc>"] });

  it("a subnet tag (a cluster rename) updates the VPC in place; a new zone list replaces its subnets and node groups", () => {
    const base = [vpc({ cidrBlock: "10.0.0.0/16", subnetSpecs: [spec("a")], availabilityZoneNames: ["x", "y"] }), ng];
    const retag = [vpc({ ...base[0]!.inputs, subnetSpecs: [spec("b")] }), ng];
    expect(diffResources(base, retag).map((c) => [c.name, c.status, c.replacedParts])).toEqual([
      ["vpc", "updated", undefined],
    ]);
    const zones = [vpc({ ...base[0]!.inputs, availabilityZoneNames: ["x", "z"] }), ng];
    const changes = diffResources(base, zones);
    expect(changes.map((c) => [c.name, c.status, c.replacedParts])).toEqual([
      ["ng", "replaced", undefined],
      ["vpc", "updated", "its subnets"],
    ]);
    expect(changes[0]!.replacedBecause).toEqual(["it depends on its subnets of vpc, which are replaced"]);
    expect(statefulLosses(changes)).toEqual([]);
  });

  it("moving to another cluster replaces every Kubernetes object, though the kubeconfig is a redacted secret", () => {
    const objs = [
      res("pulumi:providers:kubernetes", "k8s", { kubeconfig: "[secret]" }),
      res("kubernetes:core/v1:Namespace", "ns", { metadata: { name: "ray-jobs" } }),
      res("aws:iam/role:Role", "role", { path: "/" }),
    ];
    expect(diffResources(objs, objs)).toEqual([]);
    const moved = diffResources(objs, objs, { before: "a (adopted)", after: "b (adopted)" });
    expect(moved.map((c) => [c.name, c.status])).toEqual([
      ["ns", "replaced"],
      ["k8s", "replaced"],
    ]);
    expect(moved[0]!.replacedBecause).toEqual([
      "the stack's Kubernetes objects move from cluster a (adopted) to b (adopted)",
    ]);
    expect(statefulLosses(moved).map((c) => c.name)).toEqual(["ns"]);
  });

  it("a retained resource removed from the stack stays in the cloud: not a loss; replaced, it is", () => {
    const kept = res(BUCKET, "b", { forceDestroy: false }, { protection: ["protect", "retainOnDelete"] });
    expect(statefulLosses(diffResources([kept], []))).toEqual([]);
    const renamed = res(
      BUCKET,
      "b",
      { forceDestroy: false, bucket: "new" },
      { protection: ["protect", "retainOnDelete"] },
    );
    expect(statefulLosses(diffResources([kept], [renamed])).map((c) => c.name)).toEqual(["b"]);
  });
});

describe("the Markdown cut", () => {
  it("keeps every stack's losses at the top, whatever it drops below", () => {
    const huge = Array.from({ length: 3000 }, (_, i) => res("aws:iam/role:Role", `role-${i}`, { path: `/${i}/` }));
    const dev: StackReport = {
      stack: "dev",
      diff: diffPlans(undefined, undefined),
      resources: diffResources(
        huge,
        huge.map((r) => ({ ...r, inputs: { path: "/changed/" } })),
      ),
    };
    const bucket = [res(BUCKET, "bucket", {})];
    const prod: StackReport = {
      stack: "prod",
      diff: diffPlans(undefined, undefined),
      resources: diffResources(bucket, [res(BUCKET, "bucket", { bucket: "renamed" })]),
    };
    const md = diffMarkdown([dev, prod], []);
    expect(md.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(md.split("\n")[0]).toMatch(/\(REPLACES Bucket bucket in prod\)\*\*$/);
    expect(md).toContain("- :warning: **prod: REPLACED Bucket bucket (because bucket)");
    // dev's fold is too long and is dropped; prod's section still gets in
    expect(md).toContain("### Stack `prod`");
    expect(md).toContain("cut to fit GitHub's comment limit");
  });
});

describe("the replacement table", () => {
  it("names a source for every row and covers nested paths by prefix only", () => {
    for (const [type, rule] of Object.entries(REPLACEMENT)) {
      expect(rule.source, type).toMatch(/\S/);
      expect(rule.replaceOn.length, type).toBeGreaterThan(0);
    }
    expect(coveredBy("kubernetesNetworkConfig.serviceIpv4Cidr", ["kubernetesNetworkConfig.serviceIpv4Cidr"])).toBe(
      true,
    );
    expect(coveredBy("launchTemplate.version", ["launchTemplate.id"])).toBe(false);
    expect(coveredBy("names", ["name"])).toBe(false);
    expect(replacementRule("ray-gpu:index:Storage")).toBeUndefined();
    expect(replacementRule("kubernetes:apps/v1:Deployment")?.replaceOn).toEqual([
      "metadata.name",
      "metadata.namespace",
    ]);
  });
});
