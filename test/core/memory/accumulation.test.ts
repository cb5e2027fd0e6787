/**
 * Gradient accumulation holds every gradient through a step's later micro-batches (core/memory/estimate.ts
 * `accumulation`; on plain DDP measured on CPU by calibration/test_accumulation_peak.py), ZeRO's partitions too.
 */
import { describe, expect, it } from "vitest";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import type { Candidate, TrainingRequest } from "../../../core/memory/training-request";
import { largestAdapterTensor } from "../../../core/memory/lora";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import { GIB, single, train, trainingRequest } from "./published-helpers";

const BERT_LARGE = "BAAI/bge-large-en-v1.5";
const FP32: Partial<TrainingRequest> = {
  sequenceLength: 512,
  precision: "fp32",
  attention: "eager",
  usableGiB: ACCELERATORS.A10G.cudaTotalGiB,
};

const peakGiB = (r: Partial<TrainingRequest>, c: Candidate) => train(BERT_LARGE, { ...FP32, ...r }, c).allocatedPeakGiB;

describe("gradient accumulation", () => {
  it("adds the gradients, and the largest tensor's gradient once more, to a plain DDP micro-batch's peak", () => {
    const alone = train(BERT_LARGE, FP32, single(1));
    const accumulating = train(BERT_LARGE, { ...FP32, globalBatchSize: 4 }, single(1));
    const b = alone.breakdownGiB;
    // The fused step has no temporaries, so without accumulation the peak is the micro-batch's (activations dominate).
    expect(alone.allocatedPeakGiB).toBeCloseTo(b.weights + b.optimizerStates + b.activations + b.logits, 2);
    const largestGradientGiB = (4 * trainingRequest(BERT_LARGE).model.largestLayerParameters) / GIB;
    expect(accumulating.allocatedPeakGiB - alone.allocatedPeakGiB).toBeCloseTo(b.gradients + largestGradientGiB, 2);
  });

  it("adds one adapter tensor's gradient under LoRA: the rank times the widest adapted layer", () => {
    const llama = trainingRequest("meta-llama/Llama-3.1-8B").model;
    expect(largestAdapterTensor(llama, 16, ["q_proj", "v_proj"])).toBe(16 * 4096);
    expect(largestAdapterTensor(llama, 16, ["q_proj", "v_proj", "up_proj", "down_proj"])).toBe(16 * 14336);
    const lora = {
      ...FP32,
      precision: "bf16-mixed" as const,
      lora: { rank: 16, targetModules: ["query", "value"], quantization: "none" as const, dropout: 0 },
    };
    const alone = train(BERT_LARGE, lora, single(1));
    const accumulating = train(BERT_LARGE, { ...lora, globalBatchSize: 4 }, single(1));
    const bert = trainingRequest(BERT_LARGE).model;
    const adapterGradientGiB = (4 * largestAdapterTensor(bert, 16, ["query", "value"])) / GIB;
    expect(accumulating.allocatedPeakGiB - alone.allocatedPeakGiB).toBeCloseTo(
      alone.breakdownGiB.gradients + adapterGradientGiB,
      3,
    );
  });

  it("counts nothing more for one micro-batch per step", () => {
    expect(peakGiB({ globalBatchSize: 2 }, single(2))).toBe(peakGiB({}, single(2)));
  });

  it("holds ZeRO's gradient partitions too, whose new gradients its buckets carry", () => {
    const zero2: Partial<TrainingRequest> = { gpus: 2, gpusPerNode: 2, strategy: "deepspeed" };
    const sharded = single(1, { zeroStage: 2 });
    const alone = train(BERT_LARGE, { ...FP32, ...zero2 }, sharded);
    const b = alone.breakdownGiB;
    expect(b.activations + b.logits).toBeGreaterThan(b.gradients);
    const accumulating = peakGiB({ ...zero2, globalBatchSize: 8 }, sharded);
    expect(accumulating - alone.allocatedPeakGiB).toBeCloseTo(b.gradients, 2);
  });

  it("sizes the micro-batch it chooses with the gradients held", () => {
    // Batch 4 in one micro-batch needs about 11 GiB: on 9 GiB the plan accumulates smaller micro-batches.
    const tight = { ...FP32, usableGiB: 9, globalBatchSize: 4 };
    const plan = planTrainingMemory(trainingRequest(BERT_LARGE, tight));
    const mb = plan.knobs.microBatchSize;
    expect(plan.knobs.gradientAccumulationSteps).toBe(4 / mb);
    expect(plan.knobs.gradientAccumulationSteps).toBeGreaterThan(1);
    expect(plan.memory.allocatedPeakGiB).toBe(peakGiB(tight, single(mb)));
    const gradients = plan.memory.breakdownGiB.gradients;
    expect(plan.memory.allocatedPeakGiB).toBeGreaterThan(peakGiB({ usableGiB: 9 }, single(mb)) + gradients);
  });
});
