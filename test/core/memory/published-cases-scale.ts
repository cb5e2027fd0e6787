/**
 * Sharded QLoRA at 34B and 70B (docs/memory.md, "QLoRA across GPUs"). From the rest of Answer.AI's benchmark note, whose
 * Llama-2-7B rows are in ./published-cases-v4.ts: one measured peak (Yi-34B on two 24 GB GPUs), the 70B runs of its
 * hardware table that ran (the plan must fit), and two that the note's own procedure shows did not fit without CPU
 * offloading (the plan must not fit either). From Philipp Schmid's FSDP + QLoRA guide: Llama-3-70B on four A10Gs, which
 * it says needs CPU offloading there. Runs with CPU offloading are not planned: the runtime has no parameter offload for
 * a LoRA base, so such a job is refused.
 */
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import type { ModelArchitecture } from "../../../core/models/types";
import { single, train, type PlannedRun, type PublishedCase } from "./published-helpers";
import { ANSWERAI_SETTINGS, answerAiRun, LLAMA_2_70B, type AnswerAiRun } from "./published-cases-v4";

const NOTE = "AnswerDotAI/fsdp_qlora benchmarks_03_2024.md @e877dda5";

/** No 24 GB card offers more than its whole 24 GiB to CUDA. */
export const AT_MOST_24GB = 24;

/**
 * 01-ai/Yi-34B (config.json: 60 layers, hidden 7168, 56 heads, 8 key/value heads, MLP 20480, vocabulary 64000, untied;
 * the widths of the Yi paper, arXiv:2403.04652, Table 1). Parameters counted from the widths: 60 × 557,856,768 per
 * layer, two 458,752,000-parameter embeddings and the final norm.
 */
export const YI_34B: ModelArchitecture = {
  family: "yi",
  type: "decoder-llm",
  parameters: 34_388_917_248,
  largestLayerParameters: 64_000 * 7168,
  layers: 60,
  hiddenSize: 7168,
  attentionHeads: 56,
  kvHeads: 8,
  headDim: 128,
  intermediateSize: 20_480,
  mlp: "swiglu",
  vocabSize: 64_000,
  tiedEmbeddings: false,
  maxPositionEmbeddings: 4096,
  source: "https://huggingface.co/01-ai/Yi-34B/blob/main/config.json",
};

/** FSDP's full shard of NF4 with double quantization at 2,048 tokens, as every Answer.AI row here ran. */
const qloraFsdp = (r: Pick<AnswerAiRun, "model" | "gpus" | "usableGiB" | "microBatch">) =>
  answerAiRun({ ...r, quantization: "nf4-double", shard: "full", sequenceLength: 2048 });

export const SCALE_CASES: readonly PublishedCase[] = [
  {
    id: "Yi-34B QLoRA FSDP 2×2048 (Answer.AI)",
    source: `${NOTE}: train.py on two RTX 3090s (and again on two 4090s), Yi 34B, no CPU offload, ${ANSWERAI_SETTINGS}`,
    what: "allocatedPeakGiB against the peak reserved (torch.cuda.max_memory_reserved), 23.05 GiB on both machines",
    rule: "reserved",
    unit: "GiB",
    measured: 23.05,
    predicted: () => qloraFsdp({ model: YI_34B, gpus: 2, usableGiB: AT_MOST_24GB, microBatch: 2 }).allocatedPeakGiB,
  },
];

/**
 * The least CUDA memory a card of the table offers: the catalog's figure of a card with the same memory and ECC on
 * (ECC takes a share of GDDR6), so a plan that fits it fits the benchmarked card too.
 */
const AT_LEAST = { "A5000 24GB": ACCELERATORS.A10G.cudaTotalGiB, "A6000 Ada 48GB": ACCELERATORS.L40S.cudaTotalGiB };

/** [card, GPUs, micro-batch] of the hardware table's Llama-2-70B runs without offloading; the first is the tightest. */
const RAN = [
  ["A5000 24GB", 4, 1],
  ["A5000 24GB", 8, 1],
  ["A6000 Ada 48GB", 2, 2],
  ["A6000 Ada 48GB", 4, 3],
] as const;

/**
 * Runs that fit their cards: the plan must fit the least memory such a card offers. The table picks each row's fastest
 * settings and does not say whether it checkpointed; planned with checkpointing, which needs less, the check holds
 * either way.
 */
export const SCALE_FIT_CASES: readonly PlannedRun[] = RAN.map(([card, gpus, microBatch]) => ({
  id: `Llama-2-70B QLoRA FSDP ${microBatch}×2048 on ${gpus}× ${card}, no offload (Answer.AI)`,
  source:
    `${NOTE}, "Llama-2 70B QLoRA with Context Length of 2048 on Select Accelerators": ${ANSWERAI_SETTINGS}; ` +
    `planned against ${AT_LEAST[card]} GiB, no more than the card offers`,
  plan: () => qloraFsdp({ model: LLAMA_2_70B, gpus, usableGiB: AT_LEAST[card], microBatch }),
}));

/** The 70B run on four 24 GB A5000s at micro-batch 1, the one whose plan leaves the least room (docs/memory.md). */
export const TIGHTEST_70B_RUN = { run: SCALE_FIT_CASES[0]!, gpus: RAN[0][1] };

/**
 * Runs the note had to offload to the CPU: its guide offloads only after FULL_SHARD with checkpointing ran out of
 * memory, so the same settings without offloading must not fit a 24 GB card.
 */
export const SCALE_OOM_CASES: readonly PlannedRun[] = [
  {
    id: "Llama-2-70B QLoRA FSDP 1×2048 on 2× A5000 24GB without offload (Answer.AI: needed CPU offloading)",
    source:
      `${NOTE}: the hardware table runs 2× A5000 only with CPU and activation offloading, and its "Practical Guide" ` +
      "step 5 offloads only where FULL_SHARD with gradient checkpointing did not fit",
    plan: () => qloraFsdp({ model: LLAMA_2_70B, gpus: 2, usableGiB: AT_MOST_24GB, microBatch: 1 }),
  },
  {
    id: "Yi-34B QLoRA FSDP 4×2048 on 2× RTX 3090 without offload (Answer.AI: needed CPU offloading)",
    source:
      `${NOTE}: "leaving enough room on my 24GB cards for a batch size of 1 or 2 at most"; CPU offloading "allows us ` +
      'to use a batch size of 4 instead"',
    plan: () => qloraFsdp({ model: YI_34B, gpus: 2, usableGiB: AT_MOST_24GB, microBatch: 4 }),
  },
  {
    id: "Llama-3-70B QLoRA FSDP 1×3072 on 4× A10G without offload (Philipp Schmid: needs CPU offloading)",
    source:
      "philschmid/deep-learning-pytorch-huggingface @4a0caad training/fsdp-qlora-distributed-llama3.ipynb and " +
      "scripts/run_fsdp_qlora.py (torch 2.2.2, transformers 4.40.0, peft 0.10.0, trl 0.8.6, bitsandbytes 0.43.1): " +
      "SFTTrainer, bf16 autocast, NF4 with double quantization stored in bf16, LoRA r 16 on all linear layers, " +
      'lora_dropout 0.05, SDPA, checkpointing, 3,072 packed tokens, batch 1, adamw_torch; "for 4x A10G GPUs we need ' +
      'to offload the model to the CPU", and without offloading "this only works on > 40GB GPUs"',
    plan: () =>
      train(
        "meta-llama/Llama-3.1-70B",
        {
          gpus: 4,
          gpusPerNode: 4,
          sequenceLength: 3072,
          usableGiB: ACCELERATORS.A10G.cudaTotalGiB,
          precision: "bf16-mixed",
          attention: "sdpa",
          optimizerStep: "foreach",
          lora: {
            rank: 16,
            targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
            quantization: "nf4-double",
            dropout: 0.05,
            // TRL skips prepare_model_for_kbit_training for a 4-bit base loaded for FSDP: no fp32 upcast.
            unquantizedPrecision: "bf16",
          },
        },
        single(1, { zeroStage: 3, gradientCheckpointing: true }),
      ),
  },
];
