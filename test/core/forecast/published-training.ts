/** The forecast's training runs: published tokens a second of fine-tuning runs whose settings the step model reads. */
import type { ModelArchitecture } from "../../../core/models/types";
import { linksOf } from "../../../core/forecast/job";
import { adamwBytesPerWeight, trainingStep, type TrainingStepInput } from "../../../core/forecast/training";
import { GPUS, model, type GpuName, type PublishedRun } from "./published-common";

/** Qwen (v1), from its config.json: the same layout as Llama-2 (full multi-head attention, SwiGLU), Qwen's vocabulary. */
function qwenV1(parameters: number, layers: number, hiddenSize: number, intermediateSize: number): ModelArchitecture {
  return {
    ...model("meta-llama/Llama-2-7b-hf"),
    family: "qwen",
    parameters,
    layers,
    hiddenSize,
    attentionHeads: hiddenSize / 128,
    kvHeads: hiddenSize / 128,
    headDim: 128,
    intermediateSize,
    vocabSize: 151936,
    source: "Qwen/Qwen-7B, Qwen-1_8B, Qwen-14B config.json",
  };
}
const QWEN_7B = qwenV1(7.72e9, 32, 4096, 11008);
const QWEN_1_8B = qwenV1(1.84e9, 24, 2048, 5504);
const QWEN_14B = qwenV1(14.17e9, 40, 5120, 13696);
/** Qwen's LoRA on every linear (c_attn, both c_proj, w1, w2) at rank 64, per layer: r·(4h + h + h + 3·(h + ffn)). */
const qwenLora = (m: ModelArchitecture) => m.layers * 64 * (6 * m.hiddenSize + 3 * (m.hiddenSize + m.intermediateSize));

/** Tokens per second of a single-node training run, from the step model. */
function trainingTokensPerSecond(
  run: Omit<TrainingStepInput, "links" | "gpu" | "gpusPerNode" | "zeroStage" | "gradientBytes"> & {
    readonly gpu: GpuName;
    readonly pureBf16: boolean;
    /** Tokens a sample holds as the source counts them (without padding), where it differs from `sampleTokens`. */
    readonly countedTokens?: number;
  },
): number {
  const step = trainingStep({
    ...run,
    gpu: GPUS[run.gpu],
    gpusPerNode: run.gpus,
    zeroStage: 0,
    gradientBytes: run.pureBf16 ? 2 : 4,
    links: linksOf(100_000, "tcp"),
  });
  const samples = run.gpus * run.microBatchSize * run.gradientAccumulation;
  return (samples * (run.countedTokens ?? run.sampleTokens)) / (step.busySeconds + step.waitSeconds);
}

const PEFT = "huggingface/peft@5d602fdb method_comparison/MetaMathQA/results/";
/** MetaMathQA: 4,198,051 tokens over 20,000 samples (209.9 per sample), batches of 4 padded to their longest. */
const META_MATH = {
  model: model("meta-llama/Llama-3.2-3B"),
  gpu: "L40S" as const,
  gpus: 1,
  sampleTokens: 210,
  microBatchSize: 4,
  gradientAccumulation: 1,
  gradientCheckpointing: false,
  pureBf16: true,
  // torch.optim.AdamW's default on CUDA (foreach), in the model's bf16.
  optimizerBytesPerWeight: adamwBytesPerWeight("foreach", true),
};
/** A LoRA of `trainable` weights at `rank` (its modules' features are trainable / rank), or a full fine-tune. */
const lora = (trainable: number, rank: number) =>
  ({ method: "lora", trainableParameters: trainable, adapterFeatures: trainable / rank }) as const;
const full = (trainable: number) => ({ method: "full", trainableParameters: trainable, adapterFeatures: 0 }) as const;
const QWEN = "QwenLM/Qwen@2df8e8ac README.md, 'Profiling of Memory and Speed' (A100-SXM4-80G, flash attention 2)";
/** Qwen's profile: batch 1, accumulation 8, every sample padded to the length, its scripts' gradient checkpointing. */
const qwenRun = (m: ModelArchitecture, sampleTokens: number) => ({
  model: m,
  ...lora(qwenLora(m), 64),
  gpu: "A100-SXM4-80GB" as const,
  gpus: 1,
  sampleTokens,
  microBatchSize: 1,
  gradientAccumulation: 8,
  gradientCheckpointing: true,
  pureBf16: true,
  // DeepSpeed's fused Adam on fp32 adapters.
  optimizerBytesPerWeight: adamwBytesPerWeight("fused", false),
});
const qwenCase = (m: ModelArchitecture, name: string, seq: number, stepSeconds: number): PublishedRun => ({
  id: `qwen-${name}-lora-${seq}`,
  source: QWEN,
  gpu: "A100-SXM4-80GB",
  gpus: 1,
  setting: `Qwen-${name} LoRA r64 all linears, ${seq} tokens, batch 1 × 8 accumulated, checkpointing: ${stepSeconds} s/it`,
  unit: "tokens/s",
  measured: Math.round((8 * seq) / stepSeconds),
  predicted: () => trainingTokensPerSecond(qwenRun(m, seq)),
});

export const TRAINING_RUNS: readonly PublishedRun[] = [
  {
    id: "peft-llama-3.2-3b-lora-r32-qv",
    source: `${PEFT}lora--llama-3.2-3B-rank32.json`,
    gpu: "L40S",
    gpus: 1,
    setting: "Llama-3.2-3B bf16 LoRA r32 q,v, batch 4 × ~210 tokens, no checkpointing",
    unit: "tokens/s",
    measured: 7174,
    predicted: () => trainingTokensPerSecond({ ...META_MATH, ...lora(9175040, 32) }),
  },
  {
    id: "peft-llama-3.2-3b-lora-r64-qv",
    source: `${PEFT}lora--llama-3.2-3B-rank64.json`,
    gpu: "L40S",
    gpus: 1,
    setting: "Llama-3.2-3B bf16 LoRA r64 q,v, batch 4 × ~210 tokens, no checkpointing",
    unit: "tokens/s",
    measured: 7062,
    predicted: () => trainingTokensPerSecond({ ...META_MATH, ...lora(18350080, 64) }),
  },
  {
    id: "peft-llama-3.2-3b-lora-r10-mlp",
    source: `${PEFT}lora--llama-3.2-3B-rank10-target-mlp.json`,
    gpu: "L40S",
    gpus: 1,
    setting: "Llama-3.2-3B bf16 LoRA r10 gate,up,down, batch 4 × ~210 tokens, no checkpointing",
    unit: "tokens/s",
    measured: 6309,
    predicted: () => trainingTokensPerSecond({ ...META_MATH, ...lora(9461760, 10) }),
  },
  {
    id: "peft-llama-3.2-3b-full",
    source: `${PEFT}full-finetuning--llama-3.2-3B-lr_0.00001.json`,
    gpu: "L40S",
    gpus: 1,
    setting: "Llama-3.2-3B pure bf16 full fine-tune, AdamW, batch 4 × ~210 tokens, no checkpointing",
    unit: "tokens/s",
    measured: 2316,
    predicted: () => trainingTokensPerSecond({ ...META_MATH, ...full(3212749824) }),
  },
  {
    id: "torchtune-llama-3.2-3b-full-packed",
    source: "pytorch/torchtune@bd2a0fc7 README.md, 'Optimization flags' table, row '+ Packed Dataset'",
    gpu: "A100-SXM4-80GB",
    gpus: 1,
    setting: "Llama-3.2-3B pure bf16 full fine-tune, batch 2 × 4,096 packed tokens, eager, no checkpointing",
    unit: "tokens/s",
    measured: 7075,
    predicted: () =>
      trainingTokensPerSecond({
        model: model("meta-llama/Llama-3.2-3B"),
        ...full(model("meta-llama/Llama-3.2-3B").parameters),
        gpu: "A100-SXM4-80GB",
        gpus: 1,
        sampleTokens: 4096,
        microBatchSize: 2,
        gradientAccumulation: 1,
        gradientCheckpointing: false,
        pureBf16: true,
        // The recipe's optimizer in this row is not stated: AdamW's default (foreach), in bf16.
        optimizerBytesPerWeight: adamwBytesPerWeight("foreach", true),
      }),
  },
  qwenCase(QWEN_7B, "7B", 256, 1.2),
  qwenCase(QWEN_7B, "7B", 512, 1.5),
  qwenCase(QWEN_7B, "7B", 1024, 2.8),
  qwenCase(QWEN_7B, "7B", 2048, 5.2),
  qwenCase(QWEN_7B, "7B", 4096, 10.1),
  qwenCase(QWEN_7B, "7B", 8192, 21.3),
  qwenCase(QWEN_1_8B, "1.8B", 2048, 1.7),
  qwenCase(QWEN_14B, "14B", 2048, 8.4),
];
