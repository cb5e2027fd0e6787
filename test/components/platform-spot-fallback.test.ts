/**
 * The prod stack with its training pool on spot-with-fallback, under the preview mocks: a spot and an on-demand node
 * group with distinct, stable names, the autoscaler's node-template tags telling them apart, the autoscaler told to
 * prefer spot, and a deploy order the simulation accepts.
 */
import { describe, expect, it } from "vitest";
import { checkDeployOrder } from "../../core/deploy/order";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { fallbackConfigEdit } from "../helpers/spot-fallback";
import { assertPlatformInvariants } from "./platform-invariants";
import { deployNodesOf, ofType, runProgram } from "./run-program";

const CAPACITY_TEMPLATE_TAG = "k8s.io/cluster-autoscaler/node-template/label/eks.amazonaws.com/capacityType";

describe("RayGpuPlatform, prod stack with a spot-with-fallback pool", () => {
  let rs: RecordedResource[];
  it("registers the platform and holds its invariants", async () => {
    rs = await runProgram("prod", fallbackConfigEdit);
    assertPlatformInvariants(rs);
  });

  it("makes the pool a spot group and an on-demand group from 0, the latter named as the on-demand pool's was", () => {
    const gpu = ofType(rs, "aws:eks/nodeGroup:NodeGroup").filter((g) => g.inputs["amiType"] === "AL2023_x86_64_NVIDIA");
    const view = gpu.map((g) => [
      g.name,
      g.inputs["nodeGroupNamePrefix"],
      g.inputs["capacityType"],
      (g.inputs["scalingConfig"] as { minSize: number }).minSize,
      (g.inputs["tags"] as Record<string, string>)[CAPACITY_TEMPLATE_TAG],
    ]);
    expect(view).toEqual([
      ["ray-gpu-train-a10g-4x-spot-ng", "train-a10g-4x-spot-", "SPOT", 0, "SPOT"],
      ["ray-gpu-train-a10g-4x-ng", "train-a10g-4x-", "ON_DEMAND", 0, "ON_DEMAND"],
      ["ray-gpu-infer-a10g-1x-ng", "infer-a10g-1x-", "ON_DEMAND", 0, undefined],
      ["ray-gpu-efa-a10g-8x-ng", "efa-a10g-8x-", "ON_DEMAND", 0, undefined],
    ]);
    expect(gpu[0]!.inputs["labels"]).toEqual(gpu[1]!.inputs["labels"]);
    expect(gpu[0]!.inputs["subnetIds"]).toEqual(gpu[1]!.inputs["subnetIds"]);
    const asgTags = ofType(rs, "aws:autoscaling/tag:Tag").filter(
      (t) => (t.inputs["tag"] as { key: string }).key === CAPACITY_TEMPLATE_TAG,
    );
    expect(asgTags.map((t) => [t.name, (t.inputs["tag"] as { value: string }).value])).toEqual([
      ["ray-gpu-train-a10g-4x-spot-asg-node-template-label-eks-amazonaws-com-capacityType", "SPOT"],
      ["ray-gpu-train-a10g-4x-asg-node-template-label-eks-amazonaws-com-capacityType", "ON_DEMAND"],
    ]);
  });

  it("tells the autoscaler to prefer the spot group and to give up on a spot node after the wait", () => {
    const ca = ofType(rs, "kubernetes:helm.sh/v3:Release").find((r) => r.inputs["chart"] === "cluster-autoscaler")!;
    const values = ca.inputs["values"] as Record<string, unknown>;
    expect(values["extraArgs"]).toMatchObject({ expander: "priority,least-waste", "max-node-provision-time": "10m" });
    expect(values["expanderPriorities"]).toEqual({ "10": [".*"], "20": ["^eks-train-a10g-4x-spot-[0-9a-f]{26}-"] });
  });

  it("creates the resources in an order the deploy simulation accepts", () => {
    expect(checkDeployOrder(deployNodesOf(rs))).toEqual([]);
  });
});
