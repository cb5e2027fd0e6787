import { describe, expect, it } from "vitest";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { assertPlatformInvariants } from "./platform-invariants";
import { ofType, runProgram } from "./run-program";

describe("RayGpuPlatform, prod stack (new cluster)", () => {
  let rs: RecordedResource[];
  it("registers the platform and holds its invariants", async () => {
    rs = await runProgram("prod");
    assertPlatformInvariants(rs);
  });

  it("differs from dev where the environments should: on-demand, a NAT per zone, three zones, bigger pools, slower scale-down", () => {
    const gpu = ofType(rs, "aws:eks/nodeGroup:NodeGroup").filter((g) => g.inputs["amiType"] === "AL2023_x86_64_NVIDIA");
    expect(gpu.map((g) => g.inputs["capacityType"])).toEqual(["ON_DEMAND", "ON_DEMAND"]);
    expect(gpu.map((g) => (g.inputs["scalingConfig"] as { maxSize: number }).maxSize)).toEqual([8, 8]);
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

  it("pins the training pool to one zone", () => {
    const train = ofType(rs, "aws:eks/nodeGroup:NodeGroup").find((g) => g.name === "ray-gpu-train-a10g-4x-ng")!;
    expect(train.inputs["subnetIds"]).toEqual(["<computed: private subnet in us-east-1a of the VPC>"]);
  });
});
