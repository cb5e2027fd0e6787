/**
 * The rows of test/data/activation-calibration.json (calibration/measure_activations.py) and what the planner is asked
 * for each: the tiny model's architecture, its LoRA, its activation step. Shared by activations.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ActivationStep } from "../../../core/memory/activations";
import { attentionTrainingBytesPerToken } from "../../../core/memory/attention";
import type { AttentionImplementation, GptBlock, ModelArchitecture } from "../../../core/models/types";
import { repoRoot } from "../../helpers/fixtures";

export type Family =
  "llama" | "qwen2" | "gemma" | "bert" | "gpt2" | "gpt_neox" | "phi" | "bloom" | "falcon" | "falcon_new";

export interface Row {
  family: Family;
  hidden: number;
  intermediate: number;
  headDim: number;
  heads: number;
  kvHeads: number;
  vocab: number;
  batch: number;
  seq: number;
  checkpointing: boolean;
  lora: boolean;
  /** LoRA beyond the default (query and value, no dropout): which layers, lm_head too, and lora_dropout. */
  loraTargets?: "default" | "all-linear";
  loraHead?: boolean;
  loraDropout?: number;
  /**
   * Measured under CUDA's autocast to bf16 (calibration/cuda_autocast.py), as the runtime trains mixed precision on plain
   * DDP: full training over fp32 weights, LoRA over a bf16 base.
   */
  autocast?: boolean;
  /** Full training under autocast: the bytes of autocast's 16-bit weight copies, kept out of the layers. */
  weightCopyBytes?: number;
  /** Full training under autocast: the tiny model's parameters. */
  parameters?: number;
  /** QLoRA as the runtime builds it (calibration/kbit_standin.py): PEFT's fp32 upcast kept, an fp32 stream. */
  qlora?: boolean;
  /** The attention implementation, where it is not SDPA (BLOOM's rows, which have only eager, leave it out). */
  attention?: "eager";
  layerBytesPerToken: number;
  headBytes: number;
  embedBytes: number;
  totalBytes: number;
  layers: number;
}

export const data = JSON.parse(readFileSync(join(repoRoot, "test/data/activation-calibration.json"), "utf8")) as {
  rows: Row[];
  torch: string;
  transformers: string;
};

/** The GPT-style layout of each GELU family measured. */
export const GPT_BLOCK: Partial<Record<Family, GptBlock>> = {
  gpt2: "gpt2",
  gpt_neox: "gpt-neox",
  phi: "phi",
  bloom: "bloom",
  falcon: "falcon",
  falcon_new: "falcon-new-decoder",
};

export function arch(r: Row): ModelArchitecture {
  const gptBlock = GPT_BLOCK[r.family];
  return {
    family: r.family,
    type: r.family === "bert" ? "encoder-embedding" : "decoder-llm",
    mlp: r.family === "gemma" ? "geglu" : r.family === "bert" || gptBlock ? "gelu" : "swiglu",
    ...(gptBlock ? { gptBlock } : {}),
    parameters: 0,
    largestLayerParameters: 0,
    layers: r.layers,
    hiddenSize: r.hidden,
    attentionHeads: r.heads,
    kvHeads: r.kvHeads,
    headDim: r.headDim,
    intermediateSize: r.intermediate,
    vocabSize: r.vocab,
    tiedEmbeddings: false,
    source: "calibration",
  };
}

/** The modules calibration/measure_activations.py adapted (its LORA_TARGETS, LLAMA_TARGETS). */
export const ALL_LINEAR: Partial<Record<Family, string[]>> = {
  bert: ["query", "key", "value", "dense"],
  gpt2: ["c_attn", "c_proj", "c_fc"],
  gpt_neox: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
  phi: ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"],
  bloom: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
  falcon: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
  falcon_new: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
};
export const DEFAULT_TARGETS: Partial<Record<Family, string[]>> = {
  bert: ["query", "value"],
  gpt2: ["c_attn"],
  gpt_neox: ["query_key_value"],
  bloom: ["query_key_value"],
  falcon: ["query_key_value"],
  falcon_new: ["query_key_value"],
};
export const LLAMA_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

export function loraFor(r: Row) {
  if (!r.lora) return undefined;
  const targets =
    r.loraTargets === "all-linear"
      ? (ALL_LINEAR[r.family] ?? LLAMA_ALL)
      : (DEFAULT_TARGETS[r.family] ?? ["q_proj", "v_proj"]);
  return { rank: 8, targetModules: [...targets, ...(r.loraHead ? ["lm_head"] : [])], dropout: r.loraDropout ?? 0 };
}
export const tokens = (r: Row) => r.batch * r.seq;
/** LayerNorm weights and biases per layer, in hidden sizes (RMSNorms cast in Python and keep no copy). */
export const LAYER_NORM_PARAMETERS: Record<Family, number> = {
  llama: 0,
  qwen2: 0,
  gemma: 0,
  bert: 4,
  gpt2: 4,
  gpt_neox: 4,
  phi: 2,
  bloom: 4,
  falcon: 2,
  falcon_new: 4,
};
/** The pure 16-bit row measured with the same model, batch and settings as an autocast row. */
export const pureTwin = (r: Row): Row =>
  data.rows.find(
    (x) =>
      !x.autocast &&
      x.family === r.family &&
      x.hidden === r.hidden &&
      x.intermediate === r.intermediate &&
      x.heads === r.heads &&
      x.batch === r.batch &&
      x.checkpointing === r.checkpointing &&
      x.lora === r.lora &&
      !x.loraTargets &&
      !x.qlora &&
      x.attention === r.attention,
  )!;
/** How the row's step computed, as the knob search describes it to the activation model. */
export function stepOf(r: Row): ActivationStep {
  const lora = loraFor(r);
  return {
    lora: lora && { ...lora, autocast: r.autocast ?? false, unquantizedPrecision: r.qlora ? "fp32" : "bf16" },
    device: "cpu",
    cudaAutocast: r.autocast ?? false,
    microBatchSize: r.batch,
  };
}
/** The attention a row ran: BLOOM has only eager; the others SDPA unless the row says otherwise. */
export const attentionOf = (r: Row): AttentionImplementation =>
  r.family === "bloom" ? "eager" : (r.attention ?? "sdpa");
/**
 * Per token and layer, what the row's attention adds to its table (./attention.ts): eager scores and what eager keeps
 * beside them (BLOOM, Falcon's eager rows), Falcon-7B's SDPA, which PyTorch runs as its math kernel, and the new
 * decoder's, a fused kernel handed the causal mask; a fused SDPA at dropout 0 adds nothing elsewhere.
 */
export function eagerBytes(r: Row): number {
  // The other families' types plan dropout (BERT's hidden dropout) that their rows, measured at dropout 0, lack.
  if (r.family !== "bloom" && r.family !== "falcon" && r.family !== "falcon_new") return 0;
  const input = { seq: r.seq, bytesPerActivation: 2, frozenBase: r.lora, ...stepOf(r) };
  return attentionTrainingBytesPerToken(arch(r), attentionOf(r), input);
}
export const qloraOf = (r: Row) => (r.qlora ? " QLoRA (fp32 stream)" : "");
export const kindOf = (r: Row) =>
  (!r.lora
    ? "full"
    : `lora ${r.loraTargets ?? "default"}${r.loraHead ? "+lm_head" : ""}${r.loraDropout ? ` dropout ${r.loraDropout}` : ""}`) +
  (r.attention ? ` ${r.attention}` : "");
