/**
 * How a causal LM's loss is computed, and what its logits cost.
 *
 * - `full`: transformers' `ForCausalLMLoss` (5.18 `loss/loss_utils.py`) materialises the 16-bit logits of every token,
 *   upcasts them (`logits.float()`) and runs cross-entropy, which saves the fp32 log-softmax; at the start of backward
 *   its fp32 gradient and the 16-bit gradient handed to the LM head join them: 12 bytes per token per vocabulary entry
 *   (measured by calibration/measure_activations.py). Published runs agree on the size: chunking it away saved 7.32 GiB
 *   on Llama-3-8B at 8192 tokens (pytorch/torchtitan#996) and 8.1 GiB on Llama-3.2-3B (torchtune README), each about
 *   2 × the 3.91 GiB of fp32 logits, while those implementations still keep the full 16-bit logits.
 * - `chunked`: the runtime's `ray_gpu.loss` projects and scores {@link LOSS_CHUNK_TOKENS} tokens at a time under
 *   activation checkpointing, so only one chunk's logits exist at once (forward, and again in backward); nothing
 *   vocabulary-sized is saved. Same loss and gradients (runtime/tests/test_loss.py).
 */
import type { ModelArchitecture } from "../models/types";

export const LOSS_IMPLEMENTATIONS = ["full", "chunked"] as const;
export type LossImplementation = (typeof LOSS_IMPLEMENTATIONS)[number];

/** Tokens projected and scored at once by the chunked loss. */
export const LOSS_CHUNK_TOKENS = 512;

/** Bytes per token per vocabulary entry while a token's logits exist (see the module comment). */
export const LOGIT_BYTES_PER_VOCAB_ENTRY = 12;

/** Whether the model computes logits over its vocabulary (causal LMs and encoder-decoders; not embedding encoders). */
export function hasVocabularyLogits(m: Pick<ModelArchitecture, "type">): boolean {
  return m.type !== "encoder-embedding";
}

/** Whether the loss is a causal LM's next-token loss, the one `ray_gpu.loss` can chunk. */
export function hasCausalLmLoss(m: Pick<ModelArchitecture, "type">): boolean {
  return m.type === "decoder-llm" || m.type === "vision-language";
}

/** Peak bytes of the logits of `tokens` tokens under `loss`. */
export function logitsBytes(m: Pick<ModelArchitecture, "vocabSize">, tokens: number, loss: LossImplementation): number {
  const live = loss === "chunked" ? Math.min(tokens, LOSS_CHUNK_TOKENS) : tokens;
  return live * LOGIT_BYTES_PER_VOCAB_ENTRY * m.vocabSize;
}
