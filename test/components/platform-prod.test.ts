import { describe, expect, it } from "vitest";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { assertPlatformInvariants } from "./platform-invariants";
import { ofType, runProgram } from "./run-program";
import { checkProgram } from "../../core/deploy/program";
import { toPreview } from "../../cli/preview/run";

describe("RayGpuPlatform, prod stack (new cluster)", () => {
  let rs: RecordedResource[];
  it("registers the platform and holds its invariants", async () => {
    rs = await runProgram("prod");
    assertPlatformInvariants(rs);
  });

  it("differs from dev where the environments should: on-demand, a NAT per zone, three zones, bigger pools, slower scale-down", () => {
    const gpu = ofType(rs, "aws:eks/nodeGroup:NodeGroup").filter((g) => g.inputs["amiType"] === "AL2023_x86_64_NVIDIA");
    expect(gpu.map((g) => g.inputs["capacityType"])).toEqual(["ON_DEMAND", "ON_DEMAND", "ON_DEMAND"]);
    expect(gpu.map((g) => (g.inputs["scalingConfig"] as { maxSize: number }).maxSize)).toEqual([8, 8, 4]);
    expect(ofType(rs, "awsx:ec2:Vpc")[0]!.inputs).toMatchObject({
      natGateways: { strategy: "OnePerAz" },
      availabilityZoneNames: ["us-east-1a", "us-east-1b", "us-east-1c"],
    });
    const ca = ofType(rs, "kubernetes:helm.sh/v3:Release").find((r) => r.inputs["chart"] === "cluster-autoscaler")!;
    expect((ca.inputs["values"] as { extraArgs: Record<string, unknown> }).extraArgs["scale-down-unneeded-time"]).toBe(
      "10m",
    );
    expect(ofType(rs, "aws:s3/bucket:Bucket")[0]!.inputs["forceDestroy"]).toBe(false);
  });

  it("gives the EFA pool's template its EFA interface, in the cluster's group and a self-referencing EFA group", () => {
    const lt = ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate").find((l) => l.name === "ray-gpu-efa-a10g-8x-lt")!;
    const efaGroup = ofType(rs, "aws:ec2/securityGroup:SecurityGroup").find(
      (g) => g.name === "ray-gpu-efa-a10g-8x-efa",
    )!;
    expect(efaGroup.inputs["vpcId"]).toBe("<computed: vpcId of ray-gpu-cluster-eks>");
    expect(lt.inputs["networkInterfaces"]).toEqual([
      {
        deviceIndex: 0,
        networkCardIndex: 0,
        interfaceType: "efa",
        deleteOnTermination: "true",
        securityGroups: [
          "<computed: cluster security group of ray-gpu-cluster-eks>",
          "<computed: id of ray-gpu-efa-a10g-8x-efa>",
        ],
      },
    ]);
    expect(lt.inputs["vpcSecurityGroupIds"]).toBeUndefined();
    const self = { securityGroupId: "<computed: id of ray-gpu-efa-a10g-8x-efa>", ipProtocol: "-1" };
    for (const type of [
      "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
      "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
    ]) {
      const rules = ofType(rs, type).filter((r) => r.inputs["securityGroupId"] === self.securityGroupId);
      expect(
        rules.map((r) => [r.inputs["ipProtocol"], r.inputs["referencedSecurityGroupId"]]),
        type,
      ).toEqual([["-1", self.securityGroupId]]);
    }
  });

  it("launches the EFA pool in one cluster placement group, one subnet, with hugepages reserved before the kubelet", () => {
    const placement = ofType(rs, "aws:ec2/placementGroup:PlacementGroup");
    expect(placement.map((p) => [p.name, p.inputs["strategy"]])).toEqual([
      ["ray-gpu-efa-a10g-8x-placement", "cluster"],
    ]);
    const lt = ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate").find((l) => l.name === "ray-gpu-efa-a10g-8x-lt")!;
    // The group's name is EC2's to give (auto-named): the template takes it, so it depends on the group.
    expect(lt.inputs["placement"]).toHaveProperty("groupName");
    expect(lt.dependencies.some((d) => d.endsWith("::ray-gpu-efa-a10g-8x-placement"))).toBe(true);
    const templates = ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate");
    expect(templates.filter((t) => t.inputs["placement"] !== undefined).map((t) => t.name)).toEqual([
      "ray-gpu-efa-a10g-8x-lt",
    ]);
    const userData = Buffer.from(String(lt.inputs["userData"]), "base64").toString();
    expect(userData).toContain("sysctl -w vm.nr_hugepages=5128");
    expect(userData.indexOf("text/x-shellscript")).toBeLessThan(userData.indexOf("application/node.eks.aws"));
    const group = ofType(rs, "aws:eks/nodeGroup:NodeGroup").find((g) => g.name === "ray-gpu-efa-a10g-8x-ng")!;
    expect(group.inputs["subnetIds"]).toEqual(["<computed: private subnet in us-east-1a of the VPC>"]);
    expect(group.inputs["labels"]).toMatchObject({ "ray-gpu.io/efa": "true" });
    const tags = ofType(rs, "aws:autoscaling/tag:Tag").map((t) => t.inputs["tag"] as { key: string; value: string });
    expect(tags).toContainEqual(
      expect.objectContaining({
        key: "k8s.io/cluster-autoscaler/node-template/resources/vpc.amazonaws.com/efa",
        value: "1",
      }),
    );
    expect(tags).toContainEqual(
      expect.objectContaining({
        key: "k8s.io/cluster-autoscaler/node-template/resources/hugepages-2Mi",
        value: "10256Mi",
      }),
    );
  });

  it("installs the EFA device plugin on the EFA nodes, tolerating the GPU taint", () => {
    const release = ofType(rs, "kubernetes:helm.sh/v3:Release").find(
      (r) => r.inputs["chart"] === "aws-efa-k8s-device-plugin",
    )!;
    expect(release.inputs).toMatchObject({
      version: "v0.5.30",
      repositoryOpts: { repo: "https://aws.github.io/eks-charts" },
      namespace: "kube-system",
    });
    expect(release.inputs["values"]).toMatchObject({
      nodeSelector: { "ray-gpu.io/efa": "true" },
      tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
    });
  });

  it("has the 32-GPU job's workers request EFA and hugepages, and run NCCL over libfabric's EFA provider", () => {
    const job = ofType(rs, "kubernetes:ray.io/v1:RayJob").find(
      (j) => (j.inputs["metadata"] as { name: string }).name === "llm-pretrain",
    )!;
    type Container = {
      resources: { requests: Record<string, string>; limits: Record<string, string> };
      env: { name: string; value?: string }[];
    };
    const spec = job.inputs["spec"] as {
      rayClusterSpec: { workerGroupSpecs: { replicas: number; template: { spec: { containers: Container[] } } }[] };
    };
    const worker = spec.rayClusterSpec.workerGroupSpecs[0]!;
    const c = worker.template.spec.containers[0]!;
    expect(worker.replicas).toBe(4);
    for (const list of [c.resources.requests, c.resources.limits])
      expect(list).toMatchObject({ "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "1", "hugepages-2Mi": "5120Mi" });
    const env = Object.fromEntries(c.env.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ FI_PROVIDER: "efa", NCCL_NET: "AWS Libfabric" });
    expect(env).not.toHaveProperty("NCCL_SOCKET_NTHREADS");
  });

  it("passes the deploy simulation, which refuses the EFA job where no node would offer what its workers request", () => {
    const graph = rs.map(toPreview);
    expect(checkProgram(graph)).toEqual([]);
    const withoutPlugin = graph.filter((r) => r.inputs["chart"] !== "aws-efa-k8s-device-plugin");
    const [problem, ...more] = checkProgram(withoutPlugin);
    expect(more).toEqual([]);
    expect(problem!.message).toContain(
      "ray-gpu-efa-a10g-8x-ng: requests vpc.amazonaws.com/efa, but no EFA device plugin (aws-efa-k8s-device-plugin) " +
        "in the program advertises its EFA interface",
    );
    const plainTemplates = graph.map((r) =>
      r.name === "ray-gpu-efa-a10g-8x-lt"
        ? { ...r, inputs: { ...r.inputs, networkInterfaces: undefined, userData: "" } }
        : r,
    );
    expect(checkProgram(plainTemplates)[0]!.message).toContain(
      "ray-gpu-efa-a10g-8x-ng: requests vpc.amazonaws.com/efa, but its launch template attaches no EFA interface, and " +
        "requests hugepages-2Mi, but its user data reserves no hugepages (vm.nr_hugepages)",
    );
  });

  it("pins the training pool to one zone", () => {
    const train = ofType(rs, "aws:eks/nodeGroup:NodeGroup").find((g) => g.name === "ray-gpu-train-a10g-4x-ng")!;
    expect(train.inputs["subnetIds"]).toEqual(["<computed: private subnet in us-east-1a of the VPC>"]);
  });
});
