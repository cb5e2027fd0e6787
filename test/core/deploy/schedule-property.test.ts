/**
 * The fast placement (a tree per pool) decides exactly as the exhaustive one in test/helpers/exhaustive-place.ts, on a
 * few hundred small random stacks: pools with labels and taints, nodes in any order with few distinct free figures (so
 * ties are common and the order breaks them), pods with selectors, affinities, tolerations and requests that often do
 * not fit. Same pods placed where, same refusals with the same messages, same nodes left; trials leave nodes as they were.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { copyNodes, indexNodes, place, type NodeSlot } from "../../../core/deploy/schedule";
import type { PodRequest } from "../../../core/deploy/platform-pods";
import { exhaustivePlace } from "../../helpers/exhaustive-place";

const KEYS = ["pool", "tier"] as const;
const VALUES = ["a", "b", "c"] as const;
const TAINTS = ["gpu", "spot"] as const;

const labels = fc.record({ pool: fc.constantFrom(...VALUES), tier: fc.constantFrom(...VALUES) }, { requiredKeys: [] });
const taints = fc.subarray([...TAINTS]);
const pool = fc.record({ labels, taints });

/** Nodes in any order: each of some pool (its labels object and, mostly, its taints), with few distinct figures. */
const nodes = (pools: number) =>
  fc.array(
    fc.record({
      pool: fc.nat({ max: pools - 1 }),
      ownTaints: fc.option(taints, { freq: 5 }),
      cpuMillis: fc.constantFrom(0, 500, 1000, 2000, 4000),
      memoryMiB: fc.constantFrom(0, 1024, 2048, 8192),
      gpus: fc.constantFrom(0, 1, 4),
    }),
    { maxLength: 14 },
  );

const pod = fc.record({
  nodeSelector: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 1 }),
  tolerates: taints,
  affinityIn: fc.option(
    fc.array(fc.record({ key: fc.constantFrom(...KEYS), values: fc.subarray([...VALUES, ""]) }), { maxLength: 1 }),
    { nil: undefined },
  ),
  cpuMillis: fc.constantFrom(0, 250, 500, 1000, 3000),
  memoryMiB: fc.constantFrom(0, 512, 1024, 4096),
  gpus: fc.constantFrom(0, 0, 1, 2),
});

const stack = fc
  .array(pool, { minLength: 1, maxLength: 4 })
  .chain((pools) => fc.record({ pools: fc.constant(pools), nodes: nodes(pools.length) }))
  .map(({ pools, nodes: specs }): NodeSlot[] => {
    const count = pools.map(() => 0);
    return specs.map((s) => ({
      pool: `p${s.pool}`,
      index: ++count[s.pool]!,
      labels: pools[s.pool]!.labels,
      taints: s.ownTaints ?? pools[s.pool]!.taints,
      cpuMillis: s.cpuMillis,
      memoryMiB: s.memoryMiB,
      gpus: s.gpus,
    }));
  });

const pods = fc
  .array(pod, { maxLength: 12 })
  .map((ps): PodRequest[] => ps.map((p, i) => ({ name: `job/pod-${i}`, ...p })));
const how = fc.constantFrom("spread" as const, "firstFit" as const);

describe("fast placement", () => {
  it("places, refuses and leaves nodes exactly as the exhaustive placement", () => {
    fc.assert(
      fc.property(stack, pods, how, (slots, ps, h) => {
        const [fast, slow] = [copyNodes(slots), copyNodes(slots)];
        expect(place(ps, fast, h)).toEqual(exhaustivePlace(ps, slow, h));
        expect(fast).toEqual(slow);
      }),
      { seed: 46, numRuns: 300 },
    );
  });

  it("decides each trial as the exhaustive placement on fresh nodes, and undoes it", () => {
    fc.assert(
      fc.property(stack, fc.array(fc.tuple(pods, how), { maxLength: 4 }), (slots, trials) => {
        const indexed = copyNodes(slots);
        const index = indexNodes(indexed);
        for (const [ps, h] of trials) expect(index.trial(ps, h)).toEqual(exhaustivePlace(ps, copyNodes(slots), h));
        expect(indexed).toEqual(slots);
      }),
      { seed: 47, numRuns: 200 },
    );
  });
});
