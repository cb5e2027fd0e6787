/**
 * GPU pool capacity across fields: spot alone only in dev, spot-with-fallback anywhere with the queue on, its wait (one
 * value: the Cluster Autoscaler's), and node group names EKS can hold. Exact messages, every problem at once.
 */
import { describe, expect, it } from "vitest";
import { SPOT_WAIT_MINUTES } from "../../../core/config/platform";
import { configProblems, minimalConfig, type RawConfig } from "../../helpers/fixtures";
import { FALLBACK_POOL, prodWithFallback } from "../../helpers/spot-fallback";

const prodWith = (...pools: Record<string, unknown>[]): RawConfig => {
  const raw = minimalConfig();
  raw.environment = "prod";
  raw.platform.gpuNodeGroups = pools.map((p) => ({ instanceType: "g5.12xlarge", maxNodes: 4, ...p }));
  return raw;
};
const lines = (raw: RawConfig) => configProblems(raw).split("\n").slice(1);

describe("capacity types", () => {
  it("accepts spot-with-fallback in prod, waiting the default unless told", () => {
    const pool = (wait?: number) =>
      prodWithFallback(wait).platform.gpuNodeGroups.find((g) => g.name === FALLBACK_POOL)!;
    expect(pool()).toMatchObject({ capacityType: "spot-with-fallback" });
    expect(pool().spotWaitMinutes).toBeUndefined();
    expect(pool(SPOT_WAIT_MINUTES.min).spotWaitMinutes).toBe(5);
  });

  it("refuses spot alone in prod, naming spot-with-fallback as the fix", () => {
    expect(lines(prodWith({ name: "a10g-4x", capacityType: "spot" }))).toEqual([
      "  ✖ ray-gpu:platform.gpuNodeGroups[0].capacityType: spot is allowed in dev only: an interruption kills every " +
        'NCCL rank of a job; use "spot-with-fallback" (spot first, on-demand when spot has no node within ' +
        'spotWaitMinutes) or "on-demand" in prod (got "spot")',
    ]);
  });

  it.each([
    [4, "must be >= 5 (got 4)"],
    [11, "must be <= 10 (got 11)"],
    [7.5, "expected int (got 7.5)"],
  ])("refuses spotWaitMinutes %s with its path and value", (wait, message) => {
    const raw = prodWith({ name: "a10g-4x", capacityType: "spot-with-fallback", spotWaitMinutes: wait });
    expect(lines(raw)).toContain(`  ✖ ray-gpu:platform.gpuNodeGroups[0].spotWaitMinutes: ${message}`);
  });

  it("reports every misuse of the fallback at once: a wait without it, two waits, no queue, a taken spot group name", () => {
    const raw = prodWith(
      { name: "a", capacityType: "spot-with-fallback" },
      { name: "b", spotWaitMinutes: 7 },
      { name: "a-spot", capacityType: "spot-with-fallback", spotWaitMinutes: 7 },
    );
    raw.platform["queueing"] = { enabled: false };
    const at = "  ✖ ray-gpu:platform.gpuNodeGroups";
    const noQueue =
      "capacityType: spot-with-fallback needs platform.queueing.enabled: true: Kueue's quota (maxNodes Ray pods) is " +
      "what keeps the pool's spot and on-demand node groups to maxNodes nodes together; without it each could grow " +
      'to maxNodes (got "spot-with-fallback")';
    expect(lines(raw)).toEqual([
      `${at}[0].${noQueue}`,
      `${at}[2].${noQueue}`,
      `${at}[1].spotWaitMinutes: applies to capacityType "spot-with-fallback" only, and this pool is "on-demand": ` +
        "drop it, or set capacityType: spot-with-fallback (got 7)",
      `${at}[2].spotWaitMinutes: is 7 minutes, but pool "a" waits 10: the wait is the Cluster Autoscaler's ` +
        "--max-node-provision-time, one value for every node group; give every spot-with-fallback pool the same " +
        "spotWaitMinutes (10 when none is given) (got 7)",
      `${at}[0].name: its spot node group would be named "a-spot", as another pool is: rename one of the two pools ` +
        '(got "a")',
    ]);
  });

  it("keeps node group names within EKS's 63 characters with the provider's 26-character suffix", () => {
    const raw = prodWith(
      { name: "f".repeat(32), capacityType: "spot-with-fallback" },
      { name: "o".repeat(37) },
      { name: "f".repeat(31), capacityType: "spot-with-fallback" },
      { name: "o".repeat(36) },
    );
    expect(lines(raw)).toEqual([
      `  ✖ ray-gpu:platform.gpuNodeGroups[1].name: must not be longer than 36 characters (got "${"o".repeat(37)}")`,
      `  ✖ ray-gpu:platform.gpuNodeGroups[0].name: makes the spot node group "${"f".repeat(32)}-spot" (37 ` +
        "characters), and EKS takes node group names of at most 36 here (63 with the 26-character suffix): a " +
        `spot-with-fallback pool's name is at most 31 characters (got "${"f".repeat(32)}")`,
    ]);
  });
});
