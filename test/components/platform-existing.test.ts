import { describe, expect, it } from "vitest";
import { assertPlatformInvariants } from "./platform-invariants";
import { ofType, runProgram } from "./run-program";

describe("RayGpuPlatform adopting an existing cluster", () => {
  it("creates only node groups, add-ons, storage and workloads, in the cluster's own subnets", async () => {
    const rs = await runProgram("dev", (config) => {
      const platform = JSON.parse(config["ray-gpu:platform"]!) as Record<string, unknown>;
      platform["cluster"] = { mode: "existing", name: "shared-eks" };
      config["ray-gpu:platform"] = JSON.stringify(platform);
    });
    assertPlatformInvariants(rs);
    expect(ofType(rs, "awsx:ec2:Vpc")).toEqual([]);
    expect(ofType(rs, "aws:eks/cluster:Cluster")).toEqual([]);
    expect(ofType(rs, "aws:eks/addon:Addon")).toEqual([]);
    expect(ofType(rs, "aws:eks/accessEntry:AccessEntry")[0]!.inputs).toMatchObject({
      clusterName: "shared-eks",
      type: "EC2_LINUX",
    });
    for (const g of ofType(rs, "aws:eks/nodeGroup:NodeGroup")) {
      expect(g.inputs["clusterName"]).toBe("shared-eks");
      // Only the cluster's private subnets (filtered by map-public-ip-on-launch=false).
      expect(g.inputs["subnetIds"]).toEqual([
        "<computed: private subnet of <computed: subnet 1 of shared-eks>>",
        "<computed: private subnet of <computed: subnet 2 of shared-eks>>",
      ]);
    }
  });
});
