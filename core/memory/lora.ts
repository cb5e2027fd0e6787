/** LoRA adapter geometry: which linear layers an adapter can target, and how many parameters it adds. */
import type { ModelArchitecture } from "../models/types";

/** Linear layers of a Llama-style block (PEFT target names) and their (in, out) sizes. */
export const LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;
export type LoraTarget = (typeof LORA_TARGETS)[number];

/** PEFT's default for Llama-family models (its TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING). */
export const DEFAULT_LORA_TARGETS: readonly LoraTarget[] = ["q_proj", "v_proj"];

/** (in, out) features of a target in `m`. */
export function targetShape(m: ModelArchitecture, t: LoraTarget): readonly [number, number] {
  const h = m.hiddenSize;
  const q = m.attentionHeads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  const i = m.intermediateSize;
  const shapes: Record<LoraTarget, readonly [number, number]> = {
    q_proj: [h, q],
    k_proj: [h, kv],
    v_proj: [h, kv],
    o_proj: [q, h],
    gate_proj: [h, i],
    up_proj: [h, i],
    down_proj: [i, h],
  };
  return shapes[t];
}

/** Trainable adapter parameters: rank × (in + out) per target per layer (A is r×in, B is out×r). */
export function adapterParameters(m: ModelArchitecture, rank: number, targets: readonly LoraTarget[]): number {
  return m.layers * targets.reduce((sum, t) => sum + rank * (targetShape(m, t)[0] + targetShape(m, t)[1]), 0);
}
