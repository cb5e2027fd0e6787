import { describe, expect, it } from "vitest";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { assertPlatformInvariants } from "./platform-invariants";
import { ofType, runProgram } from "./run-program";

describe("RayGpuPlatform, dev stack (new cluster)", () => {
  let rs: RecordedResource[];
  it("registers the whole platform", async () => {
    rs = await runProgram("dev");
    for (const t of [
      "awsx:ec2:Vpc",
      "aws:eks/cluster:Cluster",
      "aws:eks/nodeGroup:NodeGroup",
      "kubernetes:helm.sh/v3:Release",
      "aws:s3/bucket:Bucket",
      "kubernetes:ray.io/v1:RayJob",
    ]) {
      expect(ofType(rs, t).length, t).toBeGreaterThan(0);
    }
    expect(
      rs
        .filter((r) => r.type.startsWith("ray-gpu:index:"))
        .every((r) => r.name === "ray-gpu" || r.name.startsWith("ray-gpu-") || r.type === "ray-gpu:index:RayWorkload"),
    ).toBe(true);
  });

  it("holds the platform invariants", () => assertPlatformInvariants(rs));

  it("uses dev's choices: spot GPUs, one NAT gateway, two zones, quick scale-down, a bucket destroy may empty", () => {
    const gpu = ofType(rs, "aws:eks/nodeGroup:NodeGroup").filter((g) => g.inputs["amiType"] === "AL2023_x86_64_NVIDIA");
    expect(gpu.map((g) => g.inputs["capacityType"])).toEqual(["SPOT", "SPOT"]);
    expect(ofType(rs, "awsx:ec2:Vpc")[0]!.inputs).toMatchObject({
      natGateways: { strategy: "Single" },
      numberOfAvailabilityZones: 2,
    });
    const ca = ofType(rs, "kubernetes:helm.sh/v3:Release").find((r) => r.inputs["chart"] === "cluster-autoscaler")!;
    expect((ca.inputs["values"] as { extraArgs: Record<string, unknown> }).extraArgs["scale-down-unneeded-time"]).toBe(
      "5m",
    );
    expect(ofType(rs, "aws:s3/bucket:Bucket")[0]!.inputs["forceDestroy"]).toBe(true);
  });

  it("creates an S3 gateway endpoint and tags subnets for EKS and load balancers", () => {
    const vpc = ofType(rs, "awsx:ec2:Vpc")[0]!.inputs as {
      vpcEndpointSpecs: { serviceName: string; vpcEndpointType: string }[];
      subnetSpecs: { type: string; tags: Record<string, string> }[];
    };
    expect(vpc.vpcEndpointSpecs).toEqual([{ serviceName: "com.amazonaws.us-east-1.s3", vpcEndpointType: "Gateway" }]);
    expect(vpc.subnetSpecs.find((s) => s.type === "Private")!.tags).toMatchObject({
      "kubernetes.io/role/internal-elb": "1",
      "kubernetes.io/cluster/ray-gpu-dev": "shared",
    });
    expect(vpc.subnetSpecs.find((s) => s.type === "Public")!.tags).toMatchObject({ "kubernetes.io/role/elb": "1" });
  });

  it("publishes the bucket to RayJobs through the ray-gpu-storage ConfigMap, and applies each workload's tuning ConfigMap", () => {
    const cms = ofType(rs, "kubernetes:core/v1:ConfigMap");
    expect(
      cms.find((c) => (c.inputs["metadata"] as { name: string }).name === "ray-gpu-storage")!.inputs["data"],
    ).toMatchObject({ prefix: "ray/" });
    expect(cms.map((c) => (c.inputs["metadata"] as { name: string }).name)).toContain("llm-pretrain-tuning");
  });

  it("pins Kubernetes, uses API access entries and installs the Pod Identity agent (and EBS CSI for Prometheus)", () => {
    expect(ofType(rs, "aws:eks/cluster:Cluster")[0]!.inputs).toMatchObject({
      version: "1.36",
      accessConfig: { authenticationMode: "API" },
    });
    expect(
      ofType(rs, "aws:eks/addon:Addon")
        .map((a) => a.inputs["addonName"])
        .sort(),
    ).toEqual(["aws-ebs-csi-driver", "coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni"]);
  });

  it("sets up instance-store NVMe on GPU nodes and a large gp3 root volume", () => {
    const gpuLt = ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate").filter((l) => l.name !== "ray-gpu-system-lt");
    for (const lt of gpuLt) {
      expect(Buffer.from(String(lt.inputs["userData"]), "base64").toString()).toContain("strategy: RAID0");
      expect(
        (lt.inputs["blockDeviceMappings"] as { ebs: { volumeSize: number; volumeType: string } }[])[0]!.ebs,
      ).toMatchObject({ volumeSize: 200, volumeType: "gp3" });
    }
  });
});
