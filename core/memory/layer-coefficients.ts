/**
 * The shape of a measured activation coefficient: bytes per token and transformer layer as a linear function of the
 * model's widths. ./activations.ts holds the pure 16-bit tables, ./autocast.ts what CUDA's autocast adds to them.
 */
import type { ModelArchitecture } from "../models/types";

/** Which measured block layout an architecture follows. */
export type BlockKind = "llama" | "gemma" | "bert" | "gpt" | "neox" | "phi" | "bloom" | "falcon" | "falconNew";

/** Bytes per token per layer = h·hidden + q·(heads·headDim) + kv·(kvHeads·headDim) + i·intermediate + perToken. */
export interface LayerCoefficients {
  readonly h: number;
  readonly q: number;
  readonly kv: number;
  readonly i: number;
  readonly perToken: number;
}

/** No bytes. */
export const NO_COEFFICIENTS: LayerCoefficients = { h: 0, q: 0, kv: 0, i: 0, perToken: 0 };

/** Bytes per token of the final norm and head beyond the logits: h·hidden + perToken. */
export interface HeadCoefficients {
  readonly h: number;
  readonly perToken: number;
}

/** Bytes per token of one coefficient set. */
export function coefficientBytes(m: ModelArchitecture, c: LayerCoefficients): number {
  const q = m.attentionHeads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  return c.h * m.hiddenSize + c.q * q + c.kv * kv + c.i * m.intermediateSize + c.perToken;
}
