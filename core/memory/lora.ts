/**
 * LoRA adapter geometry: the module names PEFT can target in each model family (`target_modules` matches a module
 * name's suffix), their (in, out) sizes, and how many parameters an adapter adds.
 */
import type { ModelArchitecture } from "../models/types";

/** A module name PEFT matches, e.g. "q_proj", "lm_head". */
export type LoraTarget = string;

/** (in, out) features of each linear (or embedding) a name matches in one block, or once per model. */
interface TargetShape {
  readonly shapes: (m: ModelArchitecture) => readonly (readonly [number, number])[];
  /** Outside the blocks (LM head, input embedding): counted once, not per layer. */
  readonly once?: boolean;
}

const dims = (m: ModelArchitecture) => ({
  h: m.hiddenSize,
  q: m.attentionHeads * m.headDim,
  kv: m.kvHeads * m.headDim,
  i: m.intermediateSize,
  v: m.vocabSize,
});

/** Module names per naming scheme (transformers' `modeling_*.py` attribute names). */
const SCHEMES = {
  /** Llama, Mistral, Qwen2, Gemma, and the language models of Qwen2-VL and LLaVA. */
  llama: {
    q_proj: { shapes: (m) => [[dims(m).h, dims(m).q]] },
    k_proj: { shapes: (m) => [[dims(m).h, dims(m).kv]] },
    v_proj: { shapes: (m) => [[dims(m).h, dims(m).kv]] },
    o_proj: { shapes: (m) => [[dims(m).q, dims(m).h]] },
    gate_proj: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    up_proj: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    down_proj: { shapes: (m) => [[dims(m).i, dims(m).h]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
    embed_tokens: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true },
  },
  /** Phi-3: fused qkv and gate/up projections. */
  phi3: {
    qkv_proj: { shapes: (m) => [[dims(m).h, dims(m).q + 2 * dims(m).kv]] },
    o_proj: { shapes: (m) => [[dims(m).q, dims(m).h]] },
    gate_up_proj: { shapes: (m) => [[dims(m).h, 2 * dims(m).i]] },
    down_proj: { shapes: (m) => [[dims(m).i, dims(m).h]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
    embed_tokens: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true },
  },
  /** BERT, XLM-R and MPNet-style encoders ("dense" matches the attention output, intermediate and output layers). */
  bert: {
    query: { shapes: (m) => [[dims(m).h, dims(m).q]] },
    key: { shapes: (m) => [[dims(m).h, dims(m).kv]] },
    value: { shapes: (m) => [[dims(m).h, dims(m).kv]] },
    dense: {
      shapes: (m) => [
        [dims(m).q, dims(m).h],
        [dims(m).h, dims(m).i],
        [dims(m).i, dims(m).h],
      ],
    },
    word_embeddings: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true },
  },
} as const satisfies Record<string, Record<string, TargetShape>>;
export type LoraNaming = keyof typeof SCHEMES;

/** The naming scheme of a model family. */
export function loraNaming(m: Pick<ModelArchitecture, "family" | "type">): LoraNaming {
  if (m.type === "encoder-embedding") return "bert";
  return m.family === "phi-3" ? "phi3" : "llama";
}

/** Module names a LoRA adapter can target in `m`. */
export function loraModuleNames(m: Pick<ModelArchitecture, "family" | "type">): readonly string[] {
  return Object.keys(SCHEMES[loraNaming(m)]);
}

/** PEFT's defaults per naming scheme (`TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`: llama, phi3, bert). */
const DEFAULT_TARGETS: { readonly [N in LoraNaming]: readonly LoraTarget[] } = {
  llama: ["q_proj", "v_proj"],
  phi3: ["qkv_proj"],
  bert: ["query", "value"],
};

/** The modules PEFT adapts in `m` when none are named. */
export function defaultLoraTargets(m: Pick<ModelArchitecture, "family" | "type">): readonly LoraTarget[] {
  return DEFAULT_TARGETS[loraNaming(m)];
}

function shapeOf(m: ModelArchitecture, t: LoraTarget): TargetShape {
  const scheme: Record<string, TargetShape> = SCHEMES[loraNaming(m)];
  const shape = scheme[t];
  if (!shape) throw new RangeError(`"${t}" is not a module of ${m.family} (${loraModuleNames(m).join(", ")})`);
  return shape;
}

/** Trainable adapter parameters: rank × (in + out) per matched module (A is r×in, B is out×r), per layer or once. */
export function adapterParameters(m: ModelArchitecture, rank: number, targets: readonly LoraTarget[]): number {
  return targets.reduce((sum, t) => {
    const s = shapeOf(m, t);
    const perCopy = s.shapes(m).reduce((acc, [i, o]) => acc + rank * (i + o), 0);
    return sum + perCopy * (s.once ? 1 : m.layers);
  }, 0);
}
