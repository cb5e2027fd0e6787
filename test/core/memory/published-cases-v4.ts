/**
 * Published cases added with the planner's fourth version: Answer.AI's FSDP + QLoRA benchmarks of Llama-2-7B on two
 * 24 GB GPUs, which report the allocator's peak reservation (and, for two LoRA runs, the allocated peak too), and the
 * runs of them that must plan to fit an A10G. FSDP's FULL_SHARD is planned as ZeRO-3 (the frozen base sharded, the
 * quantization state whole), its NO_SHARD ("ddp") as plain data parallelism.
 */
import { checkpointInputBytes, type MemoryEstimate } from "../../../core/memory/estimate";
import { loraActivation } from "../../../core/memory/knob-search";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import type { Quantization } from "../../../core/memory/model-states";
import { catalogModel } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";
import { GIB, single, train, type PlannedRun, type PublishedCase } from "./published-helpers";

/** train.py's defaults at that commit (its `main` arguments), which every run of the note keeps. */
export const ANSWERAI_SETTINGS =
  "rank 64 on q, k, v, gate, up and down projections, lora_dropout 0.1, precision bf16 (pure), AdamW (foreach), " +
  "activation checkpointing, SDPA, NF4 with bitsandbytes' default double quantization";
const ANSWERAI = `AnswerDotAI/fsdp_qlora benchmarks_03_2024.md @e877dda5: train.py on 2 GPUs, Llama-2-7b-hf, ${ANSWERAI_SETTINGS}`;

/** One run of Answer.AI's train.py: the model, its GPUs, the GPU memory planned against, and the run's own settings. */
export interface AnswerAiRun {
  readonly model: string | ModelArchitecture;
  readonly gpus: number;
  readonly usableGiB: number;
  readonly quantization: Quantization;
  /** FSDP's FULL_SHARD (planned as ZeRO-3) or NO_SHARD, train.py's "ddp" (plain data parallelism). */
  readonly shard: "full" | "none";
  readonly microBatch: number;
  readonly sequenceLength: number;
}

/** train.py's `lora_target_modules` "all": the projections it adapts in a Llama-style block. */
export const ANSWERAI_TARGETS = ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"] as const;

/** Plans one run of train.py with its defaults (rank 64 on six projections, pure bf16, checkpointing, SDPA). */
export function answerAiRun(r: AnswerAiRun): MemoryEstimate {
  return train(
    r.model,
    {
      gpus: r.gpus,
      gpusPerNode: r.gpus,
      sequenceLength: r.sequenceLength,
      usableGiB: r.usableGiB,
      attention: "sdpa",
      optimizerStep: "foreach",
      lora: {
        rank: 64,
        targetModules: ANSWERAI_TARGETS,
        quantization: r.quantization,
        dropout: 0.1,
        // train.py loads the base in bf16 and quantizes it itself: no prepare_model_for_kbit_training, no fp32 upcast.
        unquantizedPrecision: "bf16",
      },
    },
    single(r.microBatch, { zeroStage: r.shard === "full" ? 3 : 0, gradientCheckpointing: true }),
  );
}

/** A run of Llama-2-7B on the benchmark's two GPUs, planned against an A10G. */
const answerAi = (quantization: Quantization, shard: "full" | "none", microBatch: number, sequenceLength: number) =>
  answerAiRun({
    model: "meta-llama/Llama-2-7b-hf",
    gpus: 2,
    usableGiB: ACCELERATORS.A10G.cudaTotalGiB,
    quantization,
    shard,
    microBatch,
    sequenceLength,
  });

/** [label, quantization, shard, micro-batch, context, GiB, what the source reports]. */
const RUNS = [
  ["QLoRA FSDP 1×512", "nf4-double", "full", 1, 512, 4.98, "reserved"],
  ["QLoRA FSDP 1×2048", "nf4-double", "full", 1, 2048, 5.21, "reserved"],
  ["QLoRA FSDP 4×2048", "nf4-double", "full", 4, 2048, 11.22, "reserved"],
  ["QLoRA FSDP 10×2048", "nf4-double", "full", 10, 2048, 20.97, "reserved"],
  ["QLoRA NO_SHARD 8×2048", "nf4-double", "none", 8, 2048, 20.94, "reserved"],
  ["LoRA FSDP 1×512", "none", "full", 1, 512, 8.28, "peak"],
  ["LoRA FSDP 1×2048", "none", "full", 1, 2048, 9.16, "peak"],
  ["LoRA FSDP 4×2048", "none", "full", 4, 2048, 16.14, "reserved"],
  ["LoRA FSDP 6×2048", "none", "full", 6, 2048, 21.35, "reserved"],
  ["LoRA NO_SHARD 4×2048", "none", "none", 4, 2048, 22.04, "reserved"],
] as const;

export const FSDP_QLORA_CASES: readonly PublishedCase[] = RUNS.map(([label, q, shard, mb, seq, gib, rule]) => ({
  id: `Llama-2-7b-hf ${label} (Answer.AI)`,
  source: ANSWERAI,
  what:
    rule === "peak"
      ? "allocatedPeakGiB against the allocated peak the text gives beside the reserved one"
      : "allocatedPeakGiB against the peak reserved (torch.cuda.max_memory_reserved)",
  rule,
  unit: "GiB" as const,
  measured: gib,
  predicted: () => answerAi(q, shard, mb, seq).allocatedPeakGiB,
}));

const FMS_BNB =
  "foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb.csv @24bdadb2 (refs/requirements.txt: " +
  "transformers 4.48.1, peft 0.13.2, bitsandbytes 0.43.3, trl 0.13.0): Mistral-7B-v0.1 on one A100 80GB, HF Trainer " +
  "bf16 (autocast), torch_dtype bfloat16, NF4 with double quantization, LoRA r 16 on q/k/v/o, lora_dropout 0.1, foreach " +
  "AdamW, checkpointing, flash_attention_2, 4096 tokens packed, mem_peak_torch_mem_alloc_in_bytes";

/**
 * fms-acceleration's QLoRA runs on one GPU, in bytes: `accelerated-peft-bnb` prepares the 4-bit model without PEFT's
 * fp32 upcast (plugins/accelerated-peft framework_plugin_bnb.py `_prepare_model_for_kbit_training`: "all non-INT8
 * params ... are upcast to full precision ... the activations will then be constantly downcasted"), which is
 * `lora.unquantizedPrecision: bf16`; `baseline-peft-bnb` leaves preparation to TRL's SFTTrainer (PEFT's upcast, then
 * TRL's `peft_module_casting_to_bf16`: norms stay fp32, embeddings and head go back to bf16, so the stream runs in fp32).
 */
const FMS_QLORA = {
  4: { baseline: 20_669_338_112, accelerated: 16_373_838_336 },
  8: { baseline: 37_002_646_016, accelerated: 28_412_178_944 },
} as const;

/** fms-acceleration's adapters: rank 16 on q/k/v/o, lora_dropout 0.1, over an NF4 base with double quantization. */
const FMS_LORA = {
  rank: 16,
  targetModules: ["q_proj", "k_proj", "v_proj", "o_proj"],
  quantization: "nf4-double",
  dropout: 0.1,
} as const;

const mistralQlora = (mb: 4 | 8) =>
  train(
    "mistralai/Mistral-7B-v0.1",
    {
      sequenceLength: 4096,
      precision: "bf16-mixed",
      attention: "flash",
      optimizerStep: "foreach",
      lora: { ...FMS_LORA, unquantizedPrecision: "bf16" },
    },
    single(mb, { gradientCheckpointing: true }),
  );

export const FMS_QLORA_CASES: readonly PublishedCase[] = ([4, 8] as const).flatMap((mb) => {
  const runs = FMS_QLORA[mb];
  const tokens = mb * 4096;
  const stream = (unquantizedPrecision: "fp32" | "bf16") =>
    checkpointInputBytes(
      catalogModel("mistralai/Mistral-7B-v0.1")!,
      { lora: loraActivation(FMS_LORA, "bf16-mixed", unquantizedPrecision), cudaAutocast: true },
      tokens,
    );
  return [
    {
      id: `Mistral-7B QLoRA r16, no fp32 upcast, ${mb}×4096`,
      source: `${FMS_BNB}: accelerated-peft-bnb, batch ${mb}, "${runs.accelerated}" bytes`,
      what: "lora.unquantizedPrecision bf16: a 16-bit stream between the 4-bit layers",
      rule: "peak" as const,
      unit: "GB" as const,
      measured: runs.accelerated / 1e9,
      predicted: () => (mistralQlora(mb).allocatedPeakGiB * GIB) / 1e9,
    },
    {
      id: `Mistral-7B QLoRA fp32 stream − 16-bit stream, ${mb}×4096`,
      source:
        `${FMS_BNB}: baseline-peft-bnb "${runs.baseline}" − accelerated-peft-bnb "${runs.accelerated}" bytes, ` +
        `batch ${mb}`,
      what:
        "the checkpoints' fp32 inputs (2 more bytes per hidden unit, layer and token); the peak is in the logits phase, " +
        "so the recomputed layer's fp32 ops the plan also adds do not show, and TRL casts the head back to bf16",
      rule: "gap" as const,
      unit: "GB" as const,
      measured: (runs.baseline - runs.accelerated) / 1e9,
      predicted: () => (stream("fp32") - stream("bf16")) / 1e9,
    },
  ];
});

/** Published runs that fit a GPU with no more memory than the planned one: the plan must fit too. */
export const FIT_CASES: readonly PlannedRun[] = [
  {
    id: "Llama-2-7b-hf QLoRA NO_SHARD 8×2048 on an A10G (reserved 20.94 GiB on a 24 GB GPU)",
    source:
      `${ANSWERAI}; 20.94 GiB reserved plus the CUDA context is under an A10G's ` +
      `${ACCELERATORS.A10G.cudaTotalGiB} GiB`,
    plan: () => answerAi("nf4-double", "none", 8, 2048),
  },
];

/** meta-llama/Llama-2-70b-hf (config.json: 80 layers, hidden 8192, 64 heads, 8 key/value heads, MLP 28672). */
export const LLAMA_2_70B: ModelArchitecture = {
  ...catalogModel("meta-llama/Llama-3.1-70B")!,
  family: "llama-2",
  parameters: 68_976_648_192,
  largestLayerParameters: 32_000 * 8192,
  vocabSize: 32_000,
  maxPositionEmbeddings: 4096,
  source: "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json",
};

/**
 * PEFT's Llama-2-70B QLoRA on 2 GPUs (docs/source/accelerate/fsdp.md and deepspeed.md @5d602fdb: all linear layers,
 * rank 8, lora_dropout 0.1, NF4 double quantization, 2 × 2048 packed tokens, checkpointing, FlashAttention-2), planned
 * as ZeRO-3: docs/memory.md compares its `requiredGiB` with the 35.6 and 36.6 GB per GPU the docs report.
 */
export const peftLlama2_70bQlora = (): MemoryEstimate =>
  train(
    LLAMA_2_70B,
    {
      gpus: 2,
      gpusPerNode: 2,
      precision: "bf16-mixed",
      attention: "flash",
      lora: {
        rank: 8,
        targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
        quantization: "nf4-double",
        dropout: 0.1,
      },
    },
    single(2, { zeroStage: 3, gradientCheckpointing: true }),
  );
