import { describe, expect, it } from "vitest";
import { planPlatform } from "../../core/platform-plan";
import { autoscalerTags } from "../../core/platform/node-groups";
import { bucketAccessPolicy } from "../../core/platform/iam";
import { clusterAutoscalerPolicy } from "../../core/platform/addons";
import { GPU_TAINT } from "../../core/pools";
import { configWith, repoStack } from "../helpers/fixtures";

describe("platform plan", () => {
  it("puts the CPU pool first on the standard AMI, and GPU pools on the NVIDIA AMI with their taint", () => {
    const p = planPlatform(repoStack("dev"));
    expect([p.nodeGroups.cpu, ...p.nodeGroups.gpu].map((g) => [g.pool, g.amiType, g.capacityType])).toEqual([
      ["system", "AL2023_x86_64_STANDARD", "ON_DEMAND"],
      ["a10g-4x", "AL2023_x86_64_NVIDIA", "SPOT"],
      ["a10g-1x", "AL2023_x86_64_NVIDIA", "SPOT"],
    ]);
    expect(p.nodeGroups.gpu[0]!.taints).toEqual([{ key: "nvidia.com/gpu", value: "true", effect: "NO_SCHEDULE" }]);
    expect(p.nodeGroups.cpu.launchTemplate.userData).toBeUndefined();
    expect(p.nodeGroups.gpu[0]!.launchTemplate.userData).toContain("kind: NodeConfig");
  });

  it("writes Cluster Autoscaler node-template tags for scale from zero", () => {
    expect(
      autoscalerTags("c", {
        labels: { "ray-gpu.io/pool": "a" },
        taints: [GPU_TAINT],
        resources: { "nvidia.com/gpu": "4" },
      }),
    ).toEqual({
      "k8s.io/cluster-autoscaler/enabled": "true",
      "k8s.io/cluster-autoscaler/c": "owned",
      "k8s.io/cluster-autoscaler/node-template/label/ray-gpu.io/pool": "a",
      "k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu": "true:NoSchedule",
      "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu": "4",
    });
  });

  it("uses a cluster placement group only where asked, in the pool's zone", () => {
    const c = configWith((x) => {
      x.platform["network"] = { availabilityZoneNames: ["us-east-1a", "us-east-1b"] };
      x.platform.gpuNodeGroups[0]!["availabilityZone"] = "us-east-1b";
      x.platform.gpuNodeGroups[0]!["clusterPlacementGroup"] = true;
    });
    const g = planPlatform(c).nodeGroups.gpu[0]!;
    expect([g.availabilityZone, g.clusterPlacementGroup]).toEqual(["us-east-1b", true]);
  });

  it("sizes subnets from the VPC CIDR and skips the network when adopting a cluster", () => {
    expect(planPlatform(repoStack("prod")).network).toMatchObject({
      cidrBlock: "10.0.0.0/16",
      availabilityZones: 3,
      natGateways: "OnePerAz",
      subnets: [
        { type: "Private", cidrMask: 19 },
        { type: "Public", cidrMask: 22 },
      ],
    });
    expect(
      planPlatform(configWith((x) => (x.platform.cluster = { mode: "existing", name: "e" }))).network,
    ).toBeUndefined();
  });

  it("schedules the device plugin on exactly the nodes GPU pools label, tolerating their taint", () => {
    const p = planPlatform(repoStack("dev"));
    const values = p.helm.nvidiaDevicePlugin.values as {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: { matchExpressions: { key: string; values: string[] }[] }[];
          };
        };
      };
      tolerations: unknown[];
    };
    const expr =
      values.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]!
        .matchExpressions[0]!;
    for (const g of p.nodeGroups.gpu) expect(expr.values).toContain(g.labels[expr.key]);
    expect(expr.values).not.toContain(p.nodeGroups.cpu.labels[expr.key]);
    expect(values.tolerations).toContainEqual({ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" });
  });

  it("scopes Ray pods to the bucket prefix and the autoscaler to this cluster's groups", () => {
    const s3 = bucketAccessPolicy("arn:aws:s3:::b", "ray/");
    expect(s3.Statement[0]).toEqual({
      Sid: "LocateBucket",
      Effect: "Allow",
      Action: "s3:GetBucketLocation",
      Resource: "arn:aws:s3:::b",
    });
    expect(s3.Statement[1]).toMatchObject({
      Action: "s3:ListBucket",
      Resource: "arn:aws:s3:::b",
      Condition: { StringLike: { "s3:prefix": ["ray/*"] } },
    });
    expect(s3.Statement[2]!.Resource).toBe("arn:aws:s3:::b/ray/*");
    const ca = clusterAutoscalerPolicy("prod-eks");
    expect(ca.Statement[1]).toMatchObject({
      Action: ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
      Condition: { StringEquals: { "aws:ResourceTag/k8s.io/cluster-autoscaler/prod-eks": "owned" } },
    });
  });
});
