/**
 * The advice as a workload applies it (issue 53, class 5): each way out is planned with the workload's pinned knobs kept,
 * and where it fits only with a pin chosen otherwise, it names that pin to leave to the planner. Applying the advice
 * literally then plans as fitting, with the numbers the advice printed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import { defaultLoraTargets } from "../../../core/memory/lora";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import type { TrainingRequest } from "../../../core/memory/training-request";
import { DECODER_MODEL_IDS } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";
import { BLOOMZ_7B1 } from "./published-cases-bloom";
import { FALCON_7B, FALCON_40B } from "./published-cases-falcon";
import { architectureOf, trainingRequest } from "./published-helpers";

const A10G = ACCELERATORS.A10G.cudaTotalGiB;

/** A job on one A10G of an 8-GPU node, mixed precision, ZeRO allowed. */
const request = (model: string | ModelArchitecture, more: Partial<TrainingRequest> = {}): TrainingRequest =>
  trainingRequest(model, { gpusPerNode: 8, usableGiB: A10G, precision: "bf16-mixed", strategy: "auto", ...more });

const lora = (model: string | ModelArchitecture) =>
  ({
    rank: 16,
    targetModules: defaultLoraTargets(architectureOf(model)),
    quantization: "none",
    dropout: 0.05,
  }) as const;

/** "use gpus: N (...: X of Y GiB) and leave a, b to the planner": the count, the GiB printed and the pins to drop. */
function gpusAdvice(line: string): { gpus: number; requiredGiB: number; freed: string[] } | undefined {
  const m = /^use gpus: (\d+) \(.*: ([\d.]+) of [\d.]+ GiB\)(?: and leave (.+) to the planner)?$/.exec(line);
  return m ? { gpus: Number(m[1]), requiredGiB: Number(m[2]), freed: m[3]?.split(", ") ?? [] } : undefined;
}

describe("advice with pinned knobs", () => {
  it("keeps a pin the way out does not need to change: more GPUs at the pinned micro-batch", () => {
    const id = "meta-llama/Llama-3.1-8B";
    const plan = planTrainingMemory(request(id, { microBatchSize: 16, lora: lora(id) }));
    expect(plan.fits).toBe(false);
    const more = plan.advice.find((a) => a.startsWith("use gpus: "));
    expect(more).toMatch(/^use gpus: 4 \(ZeRO-3, checkpointing, chunked loss, micro-batch 16: [\d.]+ of [\d.]+ GiB\)$/);
    // And the longest sequence at that micro-batch.
    const sequence = plan.advice.find((a) => a.startsWith("use sequenceLength: "));
    expect(sequence).toMatch(
      /^use sequenceLength: \d+, the longest that fits \(.*micro-batch 16: [\d.]+ of [\d.]+ GiB\)$/,
    );
  });

  it("names the pin a way out must drop, and the advice applied as written fits at the GiB it printed", () => {
    const id = "Qwen/Qwen2.5-32B";
    const r = request(id, { microBatchSize: 2, lora: lora(id) });
    const plan = planTrainingMemory(r);
    expect(plan.fits).toBe(false);
    const more = plan.advice.map(gpusAdvice).find((a) => a !== undefined)!;
    expect(more).toMatchObject({ gpus: 4, freed: ["microBatchSize"] });
    const applied = planTrainingMemory({ ...r, gpus: 4, microBatchSize: undefined });
    expect(applied).toMatchObject({ fits: true, knobs: { microBatchSize: 1, zeroStage: 3 } });
    expect(applied.memory.requiredGiB).toBe(more.requiredGiB);
    // Kept at 2, the job does not fit on those 4 GPUs: the advice names the pin because it must go.
    expect(planTrainingMemory({ ...r, gpus: 4 }).fits).toBe(false);
  });

  it("adds no GPUs on top of dropping the pins where dropping them alone fits", () => {
    const plan = planTrainingMemory(request("Qwen/Qwen2.5-14B", { microBatchSize: 4, gradientCheckpointing: false }));
    expect(plan.advice[1]).toMatch(/^leave microBatchSize, gradientCheckpointing to the planner \(/);
    // Before, "use gpus: 2" was offered too, planned with the same pins dropped on one more GPU.
    expect(plan.advice.some((a) => a.startsWith("use gpus: "))).toBe(false);
  });

  it("property: a 'use gpus' way out, applied with the pins it names dropped, fits at the GiB it printed", () => {
    // The catalog's decoders and the GPT-style layouts (BLOOM, Falcon-7B, Falcon's new decoder).
    const ids: readonly (string | ModelArchitecture)[] = DECODER_MODEL_IDS.filter((id) => !id.includes("72B"));
    const decoder = fc.constantFrom(...ids, BLOOMZ_7B1, FALCON_7B, FALCON_40B);
    const pins = fc.record({
      microBatchSize: fc.constantFrom(undefined, 1, 4, 16),
      gradientCheckpointing: fc.constantFrom(undefined, false, true),
      zeroStage: fc.constantFrom(undefined, 0, 2) as fc.Arbitrary<0 | 2 | undefined>,
    });
    fc.assert(
      fc.property(decoder, pins, fc.integer({ min: 512, max: 16384 }), fc.boolean(), (id, pinned, seq, withLora) => {
        const r = request(id, { ...pinned, sequenceLength: seq, ...(withLora ? { lora: lora(id) } : {}) });
        const plan = planTrainingMemory(r);
        if (plan.fits) return;
        for (const advice of plan.advice.map(gpusAdvice)) {
          if (!advice) continue;
          const applied = { ...r, gpus: advice.gpus, ...Object.fromEntries(advice.freed.map((k) => [k, undefined])) };
          const again = planTrainingMemory(applied);
          expect(again.fits).toBe(true);
          expect(again.memory.requiredGiB).toBe(advice.requiredGiB);
        }
      }),
      { numRuns: 40 },
    );
  });
});
