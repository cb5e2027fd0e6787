/**
 * The model catalog: every architecture in one exhaustive table, instruct/chat aliases that share an
 * architecture, and what the memory model derives from an architecture (linear-layer parameters, KV bytes).
 */
import { DECODER_MODELS, DECODER_MODEL_IDS, type DecoderModelId } from "./catalog-decoders";
import { ENCODER_MODELS, ENCODER_MODEL_IDS, type EncoderModelId } from "./catalog-encoders";
import type { ModelArchitecture } from "./types";

export * from "./types";
export { DECODER_MODEL_IDS, ENCODER_MODEL_IDS };

export type CatalogModelId = DecoderModelId | EncoderModelId;

/** Every catalog model. */
export const MODELS: { readonly [K in CatalogModelId]: ModelArchitecture } = { ...DECODER_MODELS, ...ENCODER_MODELS };

/** Fine-tuned variants with the same architecture as a base model in the catalog. */
export const MODEL_ALIASES: Readonly<Record<string, CatalogModelId>> = {
  "meta-llama/Llama-3.2-1B-Instruct": "meta-llama/Llama-3.2-1B",
  "meta-llama/Llama-3.2-3B-Instruct": "meta-llama/Llama-3.2-3B",
  "meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B",
  "meta-llama/Meta-Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B",
  "meta-llama/Llama-3.1-70B-Instruct": "meta-llama/Llama-3.1-70B",
  "meta-llama/Llama-2-7b-chat-hf": "meta-llama/Llama-2-7b-hf",
  "meta-llama/Llama-2-13b-chat-hf": "meta-llama/Llama-2-13b-hf",
  "mistralai/Mistral-7B-Instruct-v0.1": "mistralai/Mistral-7B-v0.1",
  "Qwen/Qwen2.5-0.5B-Instruct": "Qwen/Qwen2.5-0.5B",
  "Qwen/Qwen2.5-1.5B-Instruct": "Qwen/Qwen2.5-1.5B",
  "Qwen/Qwen2.5-7B-Instruct": "Qwen/Qwen2.5-7B",
  "Qwen/Qwen2.5-14B-Instruct": "Qwen/Qwen2.5-14B",
  "Qwen/Qwen2.5-32B-Instruct": "Qwen/Qwen2.5-32B",
  "Qwen/Qwen2.5-72B-Instruct": "Qwen/Qwen2.5-72B",
  "google/gemma-7b-it": "google/gemma-7b",
  "google/gemma-2-9b-it": "google/gemma-2-9b",
};

/** Every name a workload may use for a catalog model. */
export const MODEL_NAMES = [
  ...DECODER_MODEL_IDS,
  ...ENCODER_MODEL_IDS,
  ...Object.keys(MODEL_ALIASES),
] as readonly string[];

/** Looks up a catalog model or alias. */
export function catalogModel(name: string): ModelArchitecture | undefined {
  if (Object.hasOwn(MODELS, name)) return MODELS[name as CatalogModelId];
  const base = MODEL_ALIASES[name];
  return base ? MODELS[base] : undefined;
}

/** Parameters of the token embedding (one copy). */
export function embeddingParameters(m: ModelArchitecture): number {
  return m.vocabSize * m.hiddenSize;
}

/** Parameters of the language model's transformer blocks' linear layers: attention q/k/v/o and the MLP, per layer. */
export function blockLinearParameters(m: ModelArchitecture): number {
  const attn = m.hiddenSize * m.attentionHeads * m.headDim * 2 + m.hiddenSize * m.kvHeads * m.headDim * 2;
  const mlpMatrices = m.mlp === "swiglu" || m.mlp === "geglu" ? 3 : 2;
  return m.layers * (attn + mlpMatrices * m.hiddenSize * m.intermediateSize);
}

/**
 * Parameters QLoRA stores in NF4: every `nn.Linear` but the output head, so the language model's blocks and a vision
 * tower's blocks (attention q/k/v/o, MLP fc1/fc2) and projector (transformers 5.18 `get_keys_to_not_convert` keeps only
 * the output embedding, tied weights and the last module unquantized). Embeddings, LM head, norms and a vision tower's
 * patch embedding stay unquantized.
 */
export function quantizedLinearParameters(m: ModelArchitecture): number {
  const v = m.vision;
  const vision = v
    ? v.layers * (4 * v.hiddenSize ** 2 + 2 * v.hiddenSize * v.intermediateSize) + v.projectorParameters
    : 0;
  return blockLinearParameters(m) + vision;
}

/** Largest single linear layer of a block, in parameters (dequantized one at a time under QLoRA). */
export function largestBlockLinear(m: ModelArchitecture): number {
  return Math.max(m.hiddenSize * m.intermediateSize, m.hiddenSize * m.attentionHeads * m.headDim);
}

/** KV-cache bytes per token: 2 (K and V) × layers × KV heads × head dim × bytes per element. */
export function kvCacheBytesPerToken(m: ModelArchitecture, bytesPerElement = 2): number {
  return 2 * m.layers * m.kvHeads * m.headDim * bytesPerElement;
}
