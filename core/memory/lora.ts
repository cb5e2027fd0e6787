/**
 * LoRA adapter geometry: the module names PEFT can target in each model family (`target_modules` matches a module
 * name's suffix), their (in, out) sizes, and how many parameters an adapter adds.
 */
import { GPT_BLOCKS, type GptBlock, type ModelArchitecture } from "../models/types";

/** LoRA dropout when a workload names none (QLoRA's and most recipes' 0.05; PEFT's own default is 0). */
export const DEFAULT_LORA_DROPOUT = 0.05;

/** A module name PEFT matches, e.g. "q_proj", "lm_head". */
export type LoraTarget = string;

/** (in, out) features of each linear (or embedding) a name matches in one block, or once per model. */
interface TargetShape {
  readonly shapes: (m: ModelArchitecture) => readonly (readonly [number, number])[];
  /** Outside the blocks (LM head, input embedding): counted once, not per layer. */
  readonly once?: boolean;
  /** An embedding: its adapter looks token ids up, so it casts no activation (see {@link adapterFootprint}). */
  readonly lookup?: boolean;
}

const dims = (m: ModelArchitecture) => ({
  h: m.hiddenSize,
  q: m.attentionHeads * m.headDim,
  kv: m.kvHeads * m.headDim,
  i: m.intermediateSize,
  v: m.vocabSize,
});

/** Separate query, key and value projections (Llama-style and Phi-1.5/2). */
const SEPARATE_QKV = {
  q_proj: { shapes: (m) => [[dims(m).h, dims(m).q]] },
  k_proj: { shapes: (m) => [[dims(m).h, dims(m).kv]] },
  v_proj: { shapes: (m) => [[dims(m).h, dims(m).kv]] },
} as const satisfies Record<string, TargetShape>;

/** Module names per naming scheme (transformers' `modeling_*.py` attribute names). */
const SCHEMES = {
  /** Llama, Mistral, Qwen2, Gemma, and the language models of Qwen2-VL and LLaVA. */
  llama: {
    ...SEPARATE_QKV,
    o_proj: { shapes: (m) => [[dims(m).q, dims(m).h]] },
    gate_proj: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    up_proj: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    down_proj: { shapes: (m) => [[dims(m).i, dims(m).h]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
    embed_tokens: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true, lookup: true },
  },
  /** Phi-3: fused qkv and gate/up projections. */
  phi3: {
    qkv_proj: { shapes: (m) => [[dims(m).h, dims(m).q + 2 * dims(m).kv]] },
    o_proj: { shapes: (m) => [[dims(m).q, dims(m).h]] },
    gate_up_proj: { shapes: (m) => [[dims(m).h, 2 * dims(m).i]] },
    down_proj: { shapes: (m) => [[dims(m).i, dims(m).h]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
    embed_tokens: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true, lookup: true },
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
    word_embeddings: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true, lookup: true },
  },
  /** GPT-2 (Conv1D layers: fused query/key/value, and one `c_proj` in attention and one in the MLP). */
  gpt2: {
    c_attn: { shapes: (m) => [[dims(m).h, dims(m).q + 2 * dims(m).kv]] },
    c_proj: {
      shapes: (m) => [
        [dims(m).q, dims(m).h],
        [dims(m).i, dims(m).h],
      ],
    },
    c_fc: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
    wte: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true, lookup: true },
  },
  /** GPT-NeoX (Pythia, stablelm-base-alpha) and BLOOM: fused query/key/value, `dense` and the 4h projections. */
  neox: {
    query_key_value: { shapes: (m) => [[dims(m).h, dims(m).q + 2 * dims(m).kv]] },
    dense: { shapes: (m) => [[dims(m).q, dims(m).h]] },
    dense_h_to_4h: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    dense_4h_to_h: { shapes: (m) => [[dims(m).i, dims(m).h]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
  },
  /** Phi-1.5 and Phi-2: separate q/k/v, `dense`, and `fc1`/`fc2`. */
  phi: {
    ...SEPARATE_QKV,
    dense: { shapes: (m) => [[dims(m).q, dims(m).h]] },
    fc1: { shapes: (m) => [[dims(m).h, dims(m).i]] },
    fc2: { shapes: (m) => [[dims(m).i, dims(m).h]] },
    lm_head: { shapes: (m) => [[dims(m).h, dims(m).v]], once: true },
    embed_tokens: { shapes: (m) => [[dims(m).v, dims(m).h]], once: true, lookup: true },
  },
} as const satisfies Record<string, Record<string, TargetShape>>;
export type LoraNaming = keyof typeof SCHEMES;

/** The naming scheme of each GPT-style block layout (transformers' `modeling_gpt2`, `_gpt_neox`, `_phi`, `_bloom`). */
const GPT_BLOCK_NAMING: { readonly [B in GptBlock]: LoraNaming } = {
  gpt2: "gpt2",
  "gpt-neox": "neox",
  phi: "phi",
  bloom: "neox",
  falcon: "neox",
  "falcon-new-decoder": "neox",
};

/**
 * The `nn.Linear` subclass a layout builds its block layers from, which transformers' bitsandbytes integration leaves
 * unquantized (5.18's `replace_with_bnb_linear` replaces `Conv1D` and exactly `nn.Linear`), so they stay 16-bit and PEFT's
 * `prepare_model_for_kbit_training` would then upcast them to fp32; null where the layers are quantized.
 */
const UNQUANTIZED_LINEAR: { readonly [B in GptBlock]: string | null } = {
  gpt2: null,
  "gpt-neox": null,
  phi: null,
  bloom: null,
  falcon: "FalconLinear",
  "falcon-new-decoder": "FalconLinear",
};

/** The linear class bitsandbytes leaves unquantized in `m`'s blocks, if any (see {@link UNQUANTIZED_LINEAR}). */
export const unquantizedLinear = (m: Pick<ModelArchitecture, "gptBlock">): string | null =>
  m.gptBlock === undefined ? null : UNQUANTIZED_LINEAR[m.gptBlock];

/** Whether QLoRA can quantize `m`'s blocks. */
export const quantizable = (m: Pick<ModelArchitecture, "gptBlock">): boolean => unquantizedLinear(m) === null;

/** The GPT-style layouts whose modules include one named `name` (what a LoRA target may be asking for). */
export function gptBlocksNaming(name: string): readonly GptBlock[] {
  return GPT_BLOCKS.filter((b) => name in SCHEMES[GPT_BLOCK_NAMING[b]]);
}

/** The naming scheme of a model family. */
export function loraNaming(m: Pick<ModelArchitecture, "family" | "type" | "gptBlock">): LoraNaming {
  if (m.type === "encoder-embedding") return "bert";
  if (m.gptBlock) return GPT_BLOCK_NAMING[m.gptBlock];
  return m.family === "phi-3" ? "phi3" : "llama";
}

/** Module names a LoRA adapter can target in `m`. */
export function loraModuleNames(m: Pick<ModelArchitecture, "family" | "type" | "gptBlock">): readonly string[] {
  return Object.keys(SCHEMES[loraNaming(m)]);
}

/**
 * PEFT's defaults per naming scheme (peft 0.21 `utils/constants.py`, `TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING`:
 * llama, phi3, bert, gpt2, gpt_neox and bloom, phi).
 */
const DEFAULT_TARGETS: { readonly [N in LoraNaming]: readonly LoraTarget[] } = {
  llama: ["q_proj", "v_proj"],
  phi3: ["qkv_proj"],
  bert: ["query", "value"],
  gpt2: ["c_attn"],
  neox: ["query_key_value"],
  phi: ["q_proj", "v_proj", "fc1", "fc2"],
};

/** The modules PEFT adapts in `m` when none are named. */
export function defaultLoraTargets(m: Pick<ModelArchitecture, "family" | "type" | "gptBlock">): readonly LoraTarget[] {
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

/** The largest single adapter tensor: `rank × max(in, out)` over the matched modules (A is r×in, B is out×r). */
export function largestAdapterTensor(m: ModelArchitecture, rank: number, targets: readonly LoraTarget[]): number {
  const widest = targets.flatMap((t) => shapeOf(m, t).shapes(m)).reduce((w, [i, o]) => Math.max(w, i, o), 0);
  return rank * widest;
}

/** What the adapters of one place (each block, or once outside the blocks) keep per token. */
export interface AdapterFootprint {
  /** Input features the adapters cast: PEFT casts each adapted layer's 16-bit input to the fp32 adapter dtype. */
  readonly inputFeatures: number;
  /** Adapted layers, each keeping its rank-r projection. */
  readonly layers: number;
}

/**
 * The adapters on `targets`, per block and once outside the blocks. PEFT's `_cast_input_dtype` copy is saved by
 * `lora_A`, one per adapted layer even where several read the same input (measured: calibration/measure_activations.py,
 * `loraTargets` rows); embedding adapters look token ids up and cast nothing.
 */
export function adapterFootprint(
  m: ModelArchitecture,
  targets: readonly LoraTarget[],
): { readonly perLayer: AdapterFootprint; readonly once: AdapterFootprint } {
  const sum = { perLayer: { inputFeatures: 0, layers: 0 }, once: { inputFeatures: 0, layers: 0 } };
  for (const t of targets) {
    const s = shapeOf(m, t);
    const place = sum[s.once ? "once" : "perLayer"];
    place.layers += s.shapes(m).length;
    if (!s.lookup) place.inputFeatures += s.shapes(m).reduce((acc, [i]) => acc + i, 0);
  }
  return sum;
}
