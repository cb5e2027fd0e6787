/**
 * Published cases added with the planner's fourth version: Answer.AI's FSDP + QLoRA benchmarks of Llama-2-7B on two
 * 24 GB GPUs, which report the allocator's peak reservation (and, for two LoRA runs, the allocated peak too), and the
 * runs of them that must plan to fit an A10G. FSDP's FULL_SHARD is planned as ZeRO-3 (the frozen base sharded, the
 * quantization state whole), its NO_SHARD ("ddp") as plain data parallelism.
 */
import type { MemoryEstimate } from "../../../core/memory/estimate";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import type { Quantization } from "../../../core/memory/model-states";
import { catalogModel } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";
import { single, train, type PlannedRun, type PublishedCase } from "./published-helpers";

const ANSWERAI =
  "AnswerDotAI/fsdp_qlora benchmarks_03_2024.md @e877dda5: train.py on 2 GPUs, Llama-2-7b-hf, rank 64 on q, k, v, " +
  "gate, up and down projections, lora_dropout 0.1, precision bf16 (pure), AdamW (foreach), activation checkpointing, " +
  "SDPA, NF4 with bitsandbytes' default double quantization";

/** One run of train.py: LoRA or QLoRA, FSDP's full shard or NO_SHARD, micro-batch and context length. */
function answerAi(q: Quantization, shard: "full" | "none", microBatch: number, seq: number): MemoryEstimate {
  return train(
    "meta-llama/Llama-2-7b-hf",
    {
      gpus: 2,
      gpusPerNode: 2,
      sequenceLength: seq,
      usableGiB: ACCELERATORS.A10G.cudaTotalGiB,
      attention: "sdpa",
      optimizerStep: "foreach",
      lora: {
        rank: 64,
        targetModules: ["q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "down_proj"],
        quantization: q,
        dropout: 0.1,
      },
    },
    single(microBatch, { zeroStage: shard === "full" ? 3 : 0, gradientCheckpointing: true }),
  );
}

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
const LLAMA_2_70B: ModelArchitecture = {
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
