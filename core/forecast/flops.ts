/**
 * Floating-point work of a transformer per token, from its architecture: the matrix products of its weights and the
 * attention's score and value products at the sequence length. Pure.
 *
 * The counts are the standard ones (Kaplan et al. 2020, "Scaling Laws for Neural Language Models", table 1; Narayanan
 * et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters", appendix): a multiply-add is 2 FLOPs, a
 * forward pass costs 2 FLOPs per weight of every matrix product and `4 · layers · context · attentionWidth` for the
 * scores and the weighted values, a backward pass twice the forward (gradients of the activations and of the weights).
 * The input embedding is a lookup, not a product; a tied output head is one.
 */
import type { ModelArchitecture } from "../models/types";

/** What a pass over one token costs and how attention grows with the context. */
export interface TokenFlops {
  /** Forward FLOPs of the weights' matrix products per token. */
  readonly matmulForward: number;
  /** Forward FLOPs of attention's two products per token, at the given context. */
  readonly attentionForward: number;
}

/** Weights that take part in a matrix product for each token (every weight but the input embedding table). */
export function matmulParameters(m: ModelArchitecture): number {
  const embedding = m.vocabSize * m.hiddenSize;
  if (m.type === "encoder-embedding") return m.parameters - embedding;
  // A decoder's output head multiplies every token: tied, it is the embedding table, counted once in `parameters`.
  return m.tiedEmbeddings ? m.parameters : m.parameters - embedding;
}

/**
 * Forward FLOPs per token at `contextTokens`: causal models attend on average to half the sequence (flash and SDPA
 * kernels skip the masked half); encoders attend to all of it.
 */
export function tokenFlops(m: ModelArchitecture, contextTokens: number): TokenFlops {
  const width = m.attentionHeads * m.headDim;
  const causal = m.type !== "encoder-embedding";
  const attended = causal ? contextTokens / 2 : contextTokens;
  return {
    matmulForward: 2 * matmulParameters(m),
    attentionForward: 4 * m.layers * attended * width,
  };
}

/** Forward FLOPs per token, weights and attention together. */
export const forwardFlopsPerToken = (m: ModelArchitecture, contextTokens: number) => {
  const f = tokenFlops(m, contextTokens);
  return f.matmulForward + f.attentionForward;
};

/** How a training job updates its weights: all of them, or adapters on a frozen base (bf16 or 4-bit). */
export type TrainingMethod = "full" | "lora" | "qlora";

/**
 * Training FLOPs per token: the forward, the backward's activation gradients (as much again for the weights' products,
 * twice the forward for attention: the gradients of its scores, then of queries, keys and values), the weight gradients
 * of what is trained (2 per trainable weight), and a second forward under gradient checkpointing.
 */
export function trainingFlopsPerToken(
  m: ModelArchitecture,
  contextTokens: number,
  trainableParameters: number,
  gradientCheckpointing: boolean,
): number {
  const f = tokenFlops(m, contextTokens);
  const forward = f.matmulForward + f.attentionForward;
  const activationGrads = f.matmulForward + 2 * f.attentionForward;
  const weightGrads = 2 * Math.min(trainableParameters, matmulParameters(m));
  const recompute = gradientCheckpointing ? forward : 0;
  return forward + activationGrads + weightGrads + recompute;
}
