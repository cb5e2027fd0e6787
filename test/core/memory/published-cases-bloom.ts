/**
 * Published cases of the BLOOM layout (`gptBlock: bloom`): PEFT's LoRA of bloomz-7b1 on one A100 80GB, and its full
 * fine-tuning, which ran out of memory there.
 */
import type { ModelArchitecture } from "../../../core/models/types";
import { single, train, type PlannedRun, type PublishedCase } from "./published-helpers";

/**
 * bigscience/bloomz-7b1, BLOOM-7.1B's architecture (BLOOM paper, arXiv:2211.05100, Table 3: 30 layers, hidden 4096, 32
 * heads; vocabulary 250,880, tied embeddings); parameters and the largest module (the embedding) counted from
 * transformers 5.18's `BloomConfig(hidden_size=4096, n_layer=30, n_head=32, vocab_size=250880)` on the meta device.
 */
export const BLOOMZ_7B1: ModelArchitecture = {
  family: "bloom",
  type: "decoder-llm",
  gptBlock: "bloom",
  parameters: 7_069_016_064,
  largestLayerParameters: 1_027_604_480,
  layers: 30,
  hiddenSize: 4096,
  attentionHeads: 32,
  kvHeads: 32,
  headDim: 128,
  intermediateSize: 16_384,
  mlp: "gelu",
  vocabSize: 250_880,
  tiedEmbeddings: true,
  source: "BLOOM paper (arXiv:2211.05100) Table 3; parameters from transformers' BloomConfig on the meta device",
};

const PEFT =
  "huggingface/peft README.md and examples/causal_language_modeling/pet_lora_clm_accelerate_ds_zero3_offload.py " +
  "@73d7224b: bigscience/bloomz-7b1 on one A100 80GB, loaded in fp32 (from_pretrained's default then), LoRA r 8 on " +
  "query_key_value (the bloom default), lora_dropout 0.1, AdamW, batch 8 × 64 tokens, BLOOM's eager attention; the " +
  "README's '32GB GPU' is the script's 'GPU Total Peak Memory consumed during the train (max)', " +
  "torch.cuda.max_memory_allocated";

/** The run's settings, full fine-tuning or LoRA, on one 80 GiB GPU (the helpers' default, an A100 80GB's at most). */
const peftBloomz = (lora: boolean) =>
  train(
    BLOOMZ_7B1,
    {
      precision: "fp32",
      sequenceLength: 64,
      ...(lora ? { lora: { rank: 8, targetModules: ["query_key_value"], dropout: 0.1, quantization: "none" } } : {}),
    },
    single(8),
  );

/**
 * The README rounds to "32GB" a figure the script prints in MiB: read as the largest of its readings (32 GiB; 32,000
 * MiB would be 31.25 GiB and 32 GB 29.8 GiB), so the plan is held to the window from the lowest side.
 */
export const BLOOM_CASES: readonly PublishedCase[] = [
  {
    id: "bloomz-7b1 LoRA (fp32), 8×64, 1×A100 80GB (PEFT)",
    source: PEFT,
    what: "allocatedPeakGiB against the README's peak allocated GPU memory, read as 32 GiB",
    rule: "peak",
    unit: "GiB",
    measured: 32,
    predicted: () => peftBloomz(true).allocatedPeakGiB,
  },
];

/** The README's full fine-tuning of the same model: "OOM GPU" on the A100 80GB. */
export const BLOOM_OOM_CASES: readonly PlannedRun[] = [
  {
    id: "bloomz-7b1 full fine-tune (fp32), 8×64, 1×A100 80GB",
    source: `${PEFT}; Full Finetuning column: OOM GPU`,
    plan: () => peftBloomz(false),
  },
];
