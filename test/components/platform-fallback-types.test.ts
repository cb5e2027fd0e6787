/**
 * The prod stack with its training pool given `fallbackInstanceTypes: [g6.12xlarge]`, under the preview mocks: a
 * g6.12xlarge node group beside the g5.12xlarge one (from 0 nodes, the L4's label, its own scale-from-zero tags), the
 * autoscaler told to try the g5 group first, and a deploy order the simulation accepts.
 */
import { describe, expect, it } from "vitest";
import { checkDeployOrder } from "../../core/deploy/order";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { assertPlatformInvariants } from "./platform-invariants";
import { deployNodesOf, ofType, runProgram } from "./run-program";

const POOL = "train-a10g-4x";
const ACCELERATOR_TAG = "k8s.io/cluster-autoscaler/node-template/label/k8s.amazonaws.com/accelerator";

/** The Pulumi config edit: the pool falls back to g6.12xlarge. */
function withG6Fallback(config: Record<string, string>): void {
  const platform = JSON.parse(config["ray-gpu:platform"]!) as { gpuNodeGroups: Record<string, unknown>[] };
  for (const g of platform.gpuNodeGroups) if (g["name"] === POOL) g["fallbackInstanceTypes"] = ["g6.12xlarge"];
  config["ray-gpu:platform"] = JSON.stringify(platform);
}

describe("RayGpuPlatform, prod stack with a g5.12xlarge pool falling back to g6.12xlarge", () => {
  let rs: RecordedResource[];
  it("registers the platform and holds its invariants", async () => {
    rs = await runProgram("prod", withG6Fallback);
    assertPlatformInvariants(rs);
  });

  it("previews a g6.12xlarge node group after the g5.12xlarge one, from 0 nodes, with the L4's template label", () => {
    const gpu = ofType(rs, "aws:eks/nodeGroup:NodeGroup").filter((g) => g.inputs["amiType"] === "AL2023_x86_64_NVIDIA");
    const view = gpu.map((g) => [
      g.name,
      g.inputs["instanceTypes"],
      (g.inputs["scalingConfig"] as { minSize: number }).minSize,
      (g.inputs["labels"] as Record<string, string>)["k8s.amazonaws.com/accelerator"],
    ]);
    expect(view).toEqual([
      [`ray-gpu-${POOL}-ng`, ["g5.12xlarge"], 0, "nvidia-a10g"],
      [`ray-gpu-${POOL}-g6-12xlarge-ng`, ["g6.12xlarge"], 0, "nvidia-l4"],
      ["ray-gpu-infer-a10g-1x-ng", ["g5.2xlarge"], 0, "nvidia-a10g"],
      ["ray-gpu-efa-a10g-8x-ng", ["g5.48xlarge"], 0, "nvidia-a10g"],
    ]);
    const accelerators = ofType(rs, "aws:autoscaling/tag:Tag")
      .map((t) => t.inputs["tag"] as { key: string; value: string })
      .filter((t) => t.key === ACCELERATOR_TAG)
      .map((t) => t.value);
    expect(accelerators).toContain("nvidia-l4");
  });

  it("tells the autoscaler to try the g5 group before the g6 one", () => {
    const ca = ofType(rs, "kubernetes:helm.sh/v3:Release").find((r) => r.inputs["chart"] === "cluster-autoscaler")!;
    const values = ca.inputs["values"] as Record<string, unknown>;
    expect(values["extraArgs"]).toMatchObject({ expander: "priority,least-waste", "max-node-provision-time": "10m" });
    expect(values["expanderPriorities"]).toEqual({ "10": [".*"], "20": [`^eks-${POOL}-[0-9a-f]{26}-`] });
  });

  it("creates the resources in an order the deploy simulation accepts", () => {
    expect(checkDeployOrder(deployNodesOf(rs))).toEqual([]);
  });
});
