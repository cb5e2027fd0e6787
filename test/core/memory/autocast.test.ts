/**
 * Mixed precision on plain DDP runs under CUDA's autocast (core/memory/autocast.ts): what the knob search hands the
 * activation model, and what a plan then counts beyond a pure 16-bit step. The coefficients themselves are checked
 * against the measured rows in activations.test.ts.
 */
import { describe, expect, it } from "vitest";
import { blockKind } from "../../../core/memory/activations";
import { eagerBytesPerScore } from "../../../core/memory/attention";
import { AUTOCAST_EXTRA } from "../../../core/memory/autocast";
import { cudaAutocastOf, trainingMemory } from "../../../core/memory/knob-search";
import type { Precision } from "../../../core/memory/model-states";
import { quantizable } from "../../../core/memory/lora";
import { type AttentionTraits, GPT_BLOCKS } from "../../../core/models/types";
import { catalogModel } from "../../../core/models";
import { single, trainingRequest } from "./published-helpers";

const GIB = 2 ** 30;
const ID = "Qwen/Qwen2.5-0.5B";
const m = catalogModel(ID)!;
const activationsGiB = (precision: Precision, zeroStage: 0 | 1, gradientCheckpointing = false) =>
  trainingMemory(
    trainingRequest(ID, { precision, gpus: 2, gpusPerNode: 2, strategy: "auto" }),
    single(4, { zeroStage, gradientCheckpointing }),
  ).breakdownGiB.activations;

const bert: AttentionTraits = {
  implementations: ["sdpa", "eager"],
  attentionDropout: 0.1,
  hiddenDropout: 0.1,
  softmaxInFp32: false,
  relativePositionBias: false,
};
const llama: AttentionTraits = { ...bert, attentionDropout: 0, hiddenDropout: 0, softmaxInFp32: true };

describe("mixed precision under CUDA's autocast", () => {
  it("applies to bf16-mixed and fp16-mixed on plain DDP only: DeepSpeed's engine casts the module to 16 bit", () => {
    expect(cudaAutocastOf("bf16-mixed", 0)).toBe(true);
    expect(cudaAutocastOf("fp16-mixed", 0)).toBe(true);
    for (const stage of [1, 2, 3]) expect(cudaAutocastOf("bf16-mixed", stage)).toBe(false);
    expect(cudaAutocastOf("bf16-true", 0)).toBe(false);
    expect(cudaAutocastOf("fp32", 0)).toBe(false);
  });

  it("full training keeps the fp32 stream's extra bytes on plain DDP, and none under ZeRO", () => {
    const tokens = 4 * 2048;
    const extra = AUTOCAST_EXTRA.llama.full;
    const perToken = m.layers * extra.layer.h * m.hiddenSize + extra.head.h * m.hiddenSize;
    expect(activationsGiB("bf16-mixed", 0) - activationsGiB("bf16-true", 0)).toBeCloseTo((tokens * perToken) / GIB, 2);
    expect(activationsGiB("bf16-mixed", 1)).toBe(activationsGiB("bf16-true", 0));
  });

  it("checkpoints keep each layer's fp32 input (2 more bytes per hidden unit) beside the recomputed layer", () => {
    const tokens = 4 * 2048;
    const extra = AUTOCAST_EXTRA.llama.full;
    const inputs = tokens * m.layers * 2 * m.hiddenSize;
    const recomputed = tokens * (extra.layer.h + extra.head.h) * m.hiddenSize;
    expect(activationsGiB("bf16-mixed", 0, true) - activationsGiB("bf16-true", 0, true)).toBeCloseTo(
      (inputs + recomputed) / GIB,
      2,
    );
  });

  it("eager attention keeps fp32 probabilities and a 16-bit copy where the softmax takes no dtype", () => {
    const gpu = { bytesPerActivation: 2, device: "gpu" } as const;
    expect(eagerBytesPerScore(bert, gpu)).toBe(5);
    expect(eagerBytesPerScore(bert, { ...gpu, cudaAutocast: true })).toBe(4 + 1 + 2);
    expect(eagerBytesPerScore({ ...bert, attentionDropout: 0 }, { ...gpu, cudaAutocast: true })).toBe(4 + 2);
    expect(eagerBytesPerScore(llama, { ...gpu, cudaAutocast: true })).toBe(eagerBytesPerScore(llama, gpu));
  });

  it("a rotary query in an fp32 stream takes the cast-back softmax to fp32: PyTorch's CPU dropout noise is then fp32", () => {
    const step = { bytesPerActivation: 2, cudaAutocast: true, fp32Stream: true } as const;
    // The fp32 softmax output, the dropout mask, and the matmul's 16-bit copy of the dropped probabilities.
    const dropout = { ...llama, attentionDropout: 0.1 };
    expect(eagerBytesPerScore(dropout, { ...step, device: "cpu" })).toBe(4 + 4 + 2);
    expect(eagerBytesPerScore(dropout, { ...step, device: "gpu" })).toBe(4 + 1 + 2);
  });

  it("has a QLoRA upcast regime exactly for the GPT-style layouts bitsandbytes quantizes", () => {
    for (const gptBlock of GPT_BLOCKS) {
      const kind = blockKind({ type: "decoder-llm", mlp: "gelu", gptBlock });
      expect(AUTOCAST_EXTRA[kind].upcast === null, gptBlock).toBe(!quantizable({ gptBlock }));
    }
  });
});
