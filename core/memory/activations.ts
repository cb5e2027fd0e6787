/**
 * Activation memory: the bytes autograd keeps for backward, per token and per transformer layer, for 16-bit
 * activations with fused (SDPA/flash) attention and no dropout; ./attention.ts adds eager attention and dropout.
 *
 * Two sources:
 * - GPT-style blocks, Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
 *   Table 2): `sbh·(34 + 5·a·s/h)` per layer with eager attention and dropout; full recomputation keeps `2·sbh`.
 * - Measured coefficients (calibration/measure_activations.py → test/data/activation-calibration.json): tiny
 *   random-initialised Llama, Qwen2, Gemma, BERT and GPT-2 models from transformers, every tensor saved by
 *   `saved_tensors_hooks` counted once. Per token and layer: Llama/Qwen2/Mistral `16h + 4q + 4kv + 8i + 24`
 *   (h hidden, q = heads·head dim, kv = KV heads·head dim, i intermediate; the 24 are the fp32 attention
 *   log-sum-exp and norm statistics), Gemma `20h + …` (its RMSNorm keeps an fp32 copy), BERT `16h + 4i + 24`,
 *   GPT-2 `20h + 10i + 24` (its tanh-GELU is written out in Python ops). LoRA freezes the base, so frozen layers
 *   keep fewer inputs (MLP `6i` when down_proj is not adapted) and each adapter adds its rank in fp32.
 *   The model reproduces every measured row exactly (test/core/memory/activations.test.ts).
 */
import type { ModelArchitecture } from "../models/types";

/** Which measured block layout an architecture follows. */
export type BlockKind = "llama" | "gemma" | "bert" | "gpt";

/** Bytes per token per layer = h·hidden + q·(heads·headDim) + kv·(kvHeads·headDim) + i·intermediate + perToken. */
export interface LayerCoefficients {
  readonly h: number;
  readonly q: number;
  readonly kv: number;
  readonly i: number;
  readonly perToken: number;
}

/** Full fine-tuning, measured. */
export const FULL_LAYER: { readonly [K in BlockKind]: LayerCoefficients } = {
  llama: { h: 16, q: 4, kv: 4, i: 8, perToken: 24 },
  gemma: { h: 20, q: 4, kv: 4, i: 8, perToken: 24 },
  bert: { h: 8, q: 4, kv: 4, i: 4, perToken: 24 },
  gpt: { h: 12, q: 4, kv: 4, i: 10, perToken: 24 },
};

/** LoRA on the attention's query and value projections (frozen base), measured; rank terms added separately. */
export const LORA_LAYER: { readonly [K in BlockKind]: LayerCoefficients } = {
  llama: { h: 16, q: 4, kv: 4, i: 6, perToken: 24 },
  gemma: { h: 16, q: 4, kv: 4, i: 6, perToken: 24 },
  bert: { h: 12, q: 4, kv: 4, i: 2, perToken: 24 },
  gpt: { h: 12, q: 4, kv: 4, i: 8, perToken: 24 },
};

/** Final norm, LM head and loss (beyond the logits themselves): bytes per token per hidden unit. */
export const HEAD_H: { readonly [K in BlockKind]: { readonly full: number; readonly lora: number } } = {
  llama: { full: 8, lora: 4 },
  gemma: { full: 10, lora: 4 },
  bert: { full: 8, lora: 4 },
  gpt: { full: 4, lora: 2 },
};

/** Per-token constant of the head (fp32 norm statistics and loss bookkeeping). */
export const HEAD_PER_TOKEN = 12;

/** The block layout of an architecture. */
export function blockKind(m: Pick<ModelArchitecture, "type" | "mlp">): BlockKind {
  if (m.type === "encoder-embedding" || m.type === "encoder-decoder") return "bert";
  if (m.mlp === "geglu") return "gemma";
  if (m.mlp === "swiglu") return "llama";
  return "gpt";
}

/** Adapter targets outside the transformer blocks (their cost is in the head or the embeddings). */
const OUTSIDE_BLOCKS = new Set(["lm_head", "embed_tokens", "wte", "word_embeddings"]);

/** Adapter settings that change what is saved. */
export interface LoraActivationInput {
  readonly rank: number;
  /** Adapted modules per layer, e.g. ["q_proj", "v_proj"]. */
  readonly targetModules: readonly string[];
}

/** Bytes saved per token per layer, scaled from 16-bit by `bytesPerActivation / 2`. */
export function layerBytesPerToken(m: ModelArchitecture, lora?: LoraActivationInput, bytesPerActivation = 2): number {
  const kind = blockKind(m);
  const c = lora ? LORA_LAYER[kind] : FULL_LAYER[kind];
  const q = m.attentionHeads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  let bytes = c.h * m.hiddenSize + c.q * q + c.kv * kv + c.i * m.intermediateSize + c.perToken;
  if (lora) {
    // An adapted down projection keeps its input (the MLP's product) for the adapter's gradient.
    if (lora.targetModules.some((t) => /down|fc2|dense_4h|output\.dense|^dense$/.test(t)))
      bytes += 2 * m.intermediateSize;
    // Each adapter in a block keeps its rank-r projection in fp32 (PEFT's default adapter dtype).
    bytes += 4 * lora.rank * lora.targetModules.filter((t) => !OUTSIDE_BLOCKS.has(t)).length;
  }
  return (bytes * bytesPerActivation) / 2;
}

/**
 * Bytes saved per token by the final norm and head, excluding the logits (./loss.ts). An adapter on `lm_head` keeps
 * its rank-r projection in fp32.
 */
export function headBytesPerToken(m: ModelArchitecture, lora?: LoraActivationInput, bytesPerActivation = 2): number {
  const h = HEAD_H[blockKind(m)];
  const adapter = lora?.targetModules.includes("lm_head") ? 4 * lora.rank : 0;
  return ((lora ? h.lora : h.full) * m.hiddenSize * bytesPerActivation) / 2 + HEAD_PER_TOKEN + adapter;
}

/**
 * Korthikanti et al. 2022, Table 2: activation bytes of one GPT-style layer with 16-bit activations, eager
 * attention and dropout: `s·b·h·(34 + 5·a·s/h)`; with full recomputation only the layer input, `2·s·b·h`.
 */
export function korthikantiLayerBytes(args: {
  seq: number;
  batch: number;
  hidden: number;
  heads: number;
  recompute?: boolean;
}): number {
  const { seq: s, batch: b, hidden: h, heads: a } = args;
  return args.recompute ? 2 * s * b * h : s * b * h * (34 + (5 * a * s) / h);
}
