/**
 * What CUDA's autocast keeps beyond the pure 16-bit step that ./activations.ts measures.
 *
 * The runtime trains under `torch.autocast("cuda", torch.bfloat16)` on plain DDP (runtime/ray_gpu/examples/loop.py).
 * Autocast casts the inputs of matmuls to bf16 and runs a list of other ops in fp32 (`layer_norm`, `softmax` without a
 * dtype, `pow`, `rsqrt`, `exp`, ...: PyTorch's Autocast Op Reference); every other op runs in its inputs' dtype. So:
 * - **full** training keeps fp32 master weights: the embeddings return fp32, the residual stream adds fp32 to the
 *   matmuls' bf16 outputs and stays fp32, and every norm saves an fp32 input (Llama, Qwen2: `10h` more per token and
 *   layer than pure bf16).
 * - **frozen** (LoRA): the base is bf16, so the stream stays 16-bit, but GPT-2's and Phi's `gelu_new` calls `pow`,
 *   which turns its tanh and product into fp32 tensors, and BERT's post-norms return fp32, which becomes its stream.
 * - **upcast** (QLoRA with PEFT's fp32 upcast, `lora.unquantizedPrecision: fp32`): the stream runs in fp32 between the
 *   4-bit layers, as in full training, over a frozen base.
 *
 * Measured by calibration/measure_activations.py under calibration/cuda_autocast.py, which adds CUDA's fp32 list to
 * CPU autocast (whose matmul list is CUDA's), against test/data/activation-calibration.json. Bytes, not scaled.
 */
import { type BlockKind, type HeadCoefficients, type LayerCoefficients, NO_COEFFICIENTS } from "./layer-coefficients";

/** What autocast adds in one regime: per layer, at the head, and whether the residual stream is fp32. */
export interface AutocastExtra {
  readonly layer: LayerCoefficients;
  readonly head: HeadCoefficients;
  /** The residual stream between layers is fp32, so a checkpoint keeps 4 bytes per hidden unit. */
  readonly fp32Stream: boolean;
}

/**
 * What autocast adds to one layout in each way a step's weights meet it (see the module comment). `upcast` is null
 * where transformers' bitsandbytes integration does not quantize the layout's layers (./lora.ts `quantizable`), so
 * QLoRA is refused and the regime never occurs.
 */
export interface AutocastRegimes {
  readonly full: AutocastExtra;
  readonly frozen: AutocastExtra;
  readonly upcast: AutocastExtra | null;
}

const NONE = NO_COEFFICIENTS;
const NO_HEAD: HeadCoefficients = { h: 0, perToken: 0 };

/**
 * Measured, per block layout and regime (bytes per token and layer, and per token at the head, where BERT's also holds
 * its embedding LayerNorm). Not counted: autocast's fp32 copies of a frozen 16-bit LayerNorm's weight and bias, 4 bytes
 * per norm parameter and layer per micro-batch (32 KiB per layer at a hidden size of 4096).
 */
export const AUTOCAST_EXTRA: { readonly [K in BlockKind]: AutocastRegimes } = {
  llama: {
    full: { layer: { ...NONE, h: 10 }, head: { h: 2, perToken: 0 }, fp32Stream: true },
    frozen: { layer: NONE, head: NO_HEAD, fp32Stream: false },
    upcast: { layer: { ...NONE, i: 6 }, head: NO_HEAD, fp32Stream: true },
  },
  gemma: {
    full: { layer: { ...NONE, h: 6 }, head: NO_HEAD, fp32Stream: true },
    frozen: { layer: NONE, head: NO_HEAD, fp32Stream: false },
    upcast: { layer: { ...NONE, i: 6 }, head: NO_HEAD, fp32Stream: true },
  },
  bert: {
    full: { layer: { ...NONE, h: 8, perToken: 8 }, head: { h: 4, perToken: 8 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 4, perToken: 8 }, head: { h: 4, perToken: 8 }, fp32Stream: true },
    upcast: { layer: { ...NONE, h: 4, i: 2, perToken: 8 }, head: { h: 4, perToken: 4 }, fp32Stream: true },
  },
  gpt: {
    full: { layer: { ...NONE, h: 4, i: 6, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 4, i: 6, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: false },
    upcast: { layer: { ...NONE, i: 8, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
  },
  neox: {
    full: { layer: { ...NONE, h: 2, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 6, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: false },
    upcast: { layer: { ...NONE, h: 2, i: 2, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
  },
  phi: {
    full: { layer: { ...NONE, h: 8, i: 6, perToken: 4 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 2, i: 6, perToken: 4 }, head: { h: 2, perToken: 4 }, fp32Stream: false },
    upcast: { layer: { ...NONE, h: 2, i: 8, perToken: 4 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
  },
  // The LayerNorm after the embeddings runs in fp32, so the stream is fp32 over a frozen base too.
  bloom: {
    full: { layer: { ...NONE, h: 4, perToken: 8 }, head: { h: 4, perToken: 8 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 4, perToken: 8 }, head: { h: 4, perToken: 8 }, fp32Stream: true },
    upcast: { layer: { ...NONE, h: 4, i: 2, perToken: 8 }, head: { h: 4, perToken: 8 }, fp32Stream: true },
  },
  // Its LayerNorm runs in fp32 and the attention and MLP each take a 16-bit copy of its output.
  falcon: {
    full: { layer: { ...NONE, h: 4, perToken: 4 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 2, perToken: 4 }, head: { h: 2, perToken: 4 }, fp32Stream: false },
    upcast: null,
  },
  // Each of its two LayerNorms runs in fp32: over a frozen base each casts the 16-bit stream to its own fp32 copy.
  falconNew: {
    full: { layer: { ...NONE, h: 2, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: true },
    frozen: { layer: { ...NONE, h: 6, perToken: 8 }, head: { h: 2, perToken: 4 }, fp32Stream: false },
    upcast: null,
  },
};
