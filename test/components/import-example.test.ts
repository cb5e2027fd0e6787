import { describe, expect, it } from "vitest";
import { settlePreview, setupPulumiMocks } from "../helpers/pulumi-mocks";

describe("examples/import-into-existing-stack.ts", () => {
  it("adds a tainted A10G node group and the pinned KubeRay operator to an existing cluster", async () => {
    const rs = await setupPulumiMocks({}, "prod");
    await import("../../examples/import-into-existing-stack.js");
    await settlePreview();
    const ng = rs.find((r) => r.type === "aws:eks/nodeGroup:NodeGroup")!;
    expect(ng.inputs).toMatchObject({
      clusterName: "my-eks",
      amiType: "AL2023_x86_64_NVIDIA",
      capacityType: "ON_DEMAND",
      subnetIds: ["subnet-0a", "subnet-0b"],
    });
    expect(ng.parent).toMatch(/GpuNodeGroup::a10g-4x$/);
    const releases = rs.filter((r) => r.type === "kubernetes:helm.sh/v3:Release");
    expect(releases.map((r) => `${String(r.inputs["chart"])}@${String(r.inputs["version"])}`).sort()).toEqual([
      "kuberay-operator@1.7.0",
      "nvidia-device-plugin@0.18.0",
    ]);
    // The Kubernetes provider came through the resource options, and the components' children use it.
    for (const r of releases) expect(r.provider).toMatch(/pulumi:providers:kubernetes::my-eks::/);
    expect(rs.some((r) => r.type === "aws:eks/cluster:Cluster")).toBe(false);
  });
});
