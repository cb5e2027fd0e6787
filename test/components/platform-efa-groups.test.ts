/**
 * An EFA pool of several node groups (spot-with-fallback: a spot group and an on-demand one) keeps its nodes in one
 * placement group and one EFA security group: the pool's first group makes them, the other uses them, so a job's
 * workers never straddle two groups, whichever capacity they land on.
 */
import { describe, expect, it } from "vitest";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { ofType, runProgram } from "./run-program";

/** The prod stack with its EFA pool on spot-with-fallback. */
function efaSpotWithFallback(config: Record<string, string>): void {
  const platform = JSON.parse(config["ray-gpu:platform"]!) as { gpuNodeGroups: Record<string, unknown>[] };
  const pool = platform.gpuNodeGroups.find((g) => g["name"] === "efa-a10g-8x")!;
  pool["capacityType"] = "spot-with-fallback";
  config["ray-gpu:platform"] = JSON.stringify(platform);
}

describe("RayGpuPlatform, prod stack with its EFA pool on spot and on-demand node groups", () => {
  let rs: RecordedResource[];
  it("registers the platform", async () => {
    rs = await runProgram("prod", efaSpotWithFallback);
    expect(rs.length).toBeGreaterThan(0);
  });

  it("puts both groups' nodes in the first group's placement group and EFA security group", () => {
    const templates = ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate").filter((t) =>
      t.name.startsWith("ray-gpu-efa-a10g-8x"),
    );
    expect(templates.map((t) => t.name)).toEqual(["ray-gpu-efa-a10g-8x-spot-lt", "ray-gpu-efa-a10g-8x-lt"]);
    expect(ofType(rs, "aws:ec2/placementGroup:PlacementGroup").map((p) => p.name)).toEqual([
      "ray-gpu-efa-a10g-8x-spot-placement",
    ]);
    const efaGroups = ofType(rs, "aws:ec2/securityGroup:SecurityGroup").filter((g) => g.name.endsWith("-efa"));
    expect(efaGroups.map((g) => g.name)).toEqual(["ray-gpu-efa-a10g-8x-spot-efa"]);
    for (const t of templates) {
      const [nic] = t.inputs["networkInterfaces"] as { securityGroups: string[] }[];
      expect(nic!.securityGroups[1], t.name).toBe("<computed: id of ray-gpu-efa-a10g-8x-spot-efa>");
      expect(
        t.dependencies.some((d) => d.endsWith("::ray-gpu-efa-a10g-8x-spot-placement")),
        t.name,
      ).toBe(true);
    }
  });
});
