/**
 * `ray-gpu diff` of a prod pool turned from on-demand into spot-with-fallback: the pool line says what it may cost
 * (spot varies; every node on demand at worst), and the platform's resources show the spot group added beside the
 * on-demand group, which is updated in place, never replaced.
 */
import { describe, expect, it } from "vitest";
import { diff, gpuPools, prod, repo } from "./fixture";

describe("ray-gpu diff, a pool turned into spot-with-fallback", () => {
  const head = prod();
  gpuPools(head)[0]!["capacityType"] = "spot-with-fallback";
  const dir = repo(prod(), head);

  it("says what the pool may cost: spot's price varies, at most every node on demand", async () => {
    const r = await diff(dir, "--no-preview");
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      "pool train-a10g-4x changed: capacityType: on-demand → spot-with-fallback, spotWaitMinutes: (none) → 10; " +
        "$/h at max 45.38 → 45.38 (spot first (the price varies), on demand when spot has no node within 10 min: at " +
        "most $45.38/h with all 8 nodes on demand)",
    );
    const md = await diff(dir, "--no-preview", "--format", "markdown");
    expect(md.out).toContain(
      "- pool `train-a10g-4x` changed: capacityType: on-demand → spot-with-fallback, spotWaitMinutes: (none) → 10 " +
        "(spot first (the price varies), on demand when spot has no node within 10 min: at most $45.38/h with all 8 " +
        "nodes on demand)",
    );
  });

  it("adds the spot group and replaces nothing: the on-demand group keeps its name, capacity and template", async () => {
    const r = await diff(dir, "--format", "json", "--fail-on", "replace");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as {
      stacks: { resources: { type: string; name: string; status: string }[] }[];
    };
    const changes = doc.stacks[0]!.resources;
    expect(changes.filter((c) => c.status === "replaced")).toEqual([]);
    const groups = changes.filter((c) => c.type === "aws:eks/nodeGroup:NodeGroup");
    expect(groups.map((c) => [c.name, c.status])).toEqual([
      ["ray-gpu-train-a10g-4x-ng", "updated"],
      ["ray-gpu-train-a10g-4x-spot-ng", "added"],
    ]);
  });
});
