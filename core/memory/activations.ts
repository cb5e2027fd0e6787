/**
 * Activation memory: the bytes autograd keeps for backward, per token and per transformer layer, for 16-bit
 * activations with fused (SDPA/flash) attention and no dropout; ./attention.ts adds eager attention and dropout.
 *
 * Two sources:
 * - GPT-style blocks, Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
 *   Table 2): `sbh·(34 + 5·a·s/h)` per layer with eager attention and dropout; full recomputation keeps `2·sbh`.
 * - Measured coefficients (calibration/measure_activations.py → test/data/activation-calibration.json): tiny
 *   random-initialised Llama, Qwen2, Gemma, BERT, GPT-2, GPT-NeoX, Phi, BLOOM and Falcon models from transformers, every tensor
 *   saved by `saved_tensors_hooks` counted once. Per token and layer: Llama/Qwen2/Mistral `16h + 4q + 4kv + 8i + 24`
 *   (h hidden, q = heads·head dim, kv = KV heads·head dim, i intermediate; the 24 are the fp32 attention
 *   log-sum-exp and norm statistics), Gemma `20h + …` (its RMSNorm keeps an fp32 copy), BERT `16h + 4i + 24`,
 *   GPT-2 `20h + 10i + 24` (its tanh-GELU is written out in Python ops), GPT-NeoX `16h + 4i + 24` (parallel
 *   attention and MLP, PyTorch's fused GELU keeps only its input) and Phi `14h + 10i + 20` (parallel from one norm,
 *   `gelu_new` in Python ops). Korthikanti's `34h` assumes eager attention and dropout and is not used for them.
 *   BLOOM runs eager attention only: its table leaves out what ./attention.ts counts for eager (`16h + 4i + 8` with
 *   the attention output; a batch of one sequence keeps `4kv` more, {@link SINGLE_SEQUENCE_EXTRA}). Falcon-7B's table
 *   (`8h + 4kv + 4i + 4`, q = h) is what a fused kernel would keep; its eager and SDPA keep more (./attention.ts).
 *   Falcon-40B's new decoder (`14h + 4i + 8`, `10h + 2i + 8` over a frozen base, q = h) is what eager keeps beside its
 *   scores; its fused SDPA keeps the mask it is handed, its log-sum-exp and, over a frozen base, its output too.
 * - These are pure 16-bit steps (bf16-true, DeepSpeed's 16-bit engine). Mixed precision on plain DDP runs under CUDA's
 *   autocast, whose fp32 ops and fp32 master weights keep more: ./autocast.ts adds it.
 * - LoRA freezes the base, so frozen layers keep fewer inputs; PEFT casts each adapted layer's 16-bit input to the
 *   fp32 adapter dtype and `lora_A` keeps that copy (4 bytes per input feature, one per adapted layer even where
 *   layers share an input), with `lora_dropout` a mask too, and each adapter its rank-r projection in fp32. LoRA on
 *   every linear layer of a Llama block thus keeps about 1.5× what full fine-tuning keeps.
 *   The model reproduces every measured row exactly (test/core/memory/activations.test.ts).
 */
import type { GptBlock, ModelArchitecture } from "../models/types";
import type { DropoutDevice } from "./attention";
import { AUTOCAST_EXTRA, type AutocastExtra } from "./autocast";
import { type BlockKind, coefficientBytes, type LayerCoefficients, NO_COEFFICIENTS } from "./layer-coefficients";
import { adapterFootprint } from "./lora";
import type { UnquantizedPrecision } from "./model-states";

export type { BlockKind, LayerCoefficients } from "./layer-coefficients";

/** Full fine-tuning, measured. */
export const FULL_LAYER: { readonly [K in BlockKind]: LayerCoefficients } = {
  llama: { h: 16, q: 4, kv: 4, i: 8, perToken: 24 },
  gemma: { h: 20, q: 4, kv: 4, i: 8, perToken: 24 },
  bert: { h: 8, q: 4, kv: 4, i: 4, perToken: 24 },
  gpt: { h: 12, q: 4, kv: 4, i: 10, perToken: 24 },
  neox: { h: 8, q: 4, kv: 4, i: 4, perToken: 24 },
  phi: { h: 6, q: 4, kv: 4, i: 10, perToken: 20 },
  // Eager attention only: the attention output before `dense` (2q) is ./attention.ts's eager output term.
  bloom: { h: 8, q: 2, kv: 4, i: 4, perToken: 8 },
  // What a fused kernel would keep (Falcon's eager at one sequence, less its scores): ./attention.ts adds what its
  // eager and SDPA (PyTorch's math kernel) keep beyond it.
  falcon: { h: 6, q: 2, kv: 4, i: 4, perToken: 4 },
  // As eager keeps it (its key and value are copies at the query's width); `dense` keeps the attention output (2q).
  // What the fused kernel saves beside its mask is ./attention.ts's.
  falconNew: { h: 12, q: 2, kv: 0, i: 4, perToken: 8 },
};

/**
 * A frozen base (LoRA), measured with adapters on the attention's query and value projections and those adapters'
 * casts taken out (they are counted per adapted layer, see {@link layerBytesPerToken}).
 */
export const FROZEN_LAYER: { readonly [K in BlockKind]: LayerCoefficients } = {
  llama: { h: 8, q: 4, kv: 4, i: 6, perToken: 24 },
  gemma: { h: 8, q: 4, kv: 4, i: 6, perToken: 24 },
  bert: { h: 4, q: 4, kv: 4, i: 2, perToken: 24 },
  gpt: { h: 8, q: 4, kv: 4, i: 8, perToken: 24 },
  neox: { h: 2, q: 4, kv: 4, i: 2, perToken: 24 },
  phi: { h: 2, q: 4, kv: 4, i: 8, perToken: 20 },
  // The query's copy (2q) is ./attention.ts's eager output term; a frozen `dense` keeps no input.
  bloom: { h: 4, q: 0, kv: 4, i: 2, perToken: 8 },
  falcon: { h: 2, q: 2, kv: 4, i: 2, perToken: 4 },
  // A frozen `dense` keeps no input; the fused kernel keeps its output (./attention.ts).
  falconNew: { h: 8, q: 0, kv: 0, i: 2, perToken: 8 },
};

/**
 * What a block keeps beyond its table when a micro-batch holds one sequence: BLOOM's query is then a view of the fused
 * query/key/value output (`reshape` merges a batch of one into the heads without a copy), so the matmul that saves the
 * query keeps that whole output, 4 more bytes per key/value width (measured); from two sequences on, `reshape` copies.
 * In QLoRA's fp32 stream the fused output is fp32 and autocast saves a fresh 16-bit copy of the query instead.
 */
export const SINGLE_SEQUENCE_EXTRA: { readonly [K in BlockKind]: LayerCoefficients } = {
  llama: NO_COEFFICIENTS,
  gemma: NO_COEFFICIENTS,
  bert: NO_COEFFICIENTS,
  gpt: NO_COEFFICIENTS,
  neox: NO_COEFFICIENTS,
  phi: NO_COEFFICIENTS,
  bloom: { ...NO_COEFFICIENTS, kv: 4 },
  // Falcon's single-sequence view of its key and value is ./attention.ts's (it depends on the attention).
  falcon: NO_COEFFICIENTS,
  falconNew: NO_COEFFICIENTS,
};

/** Final norm, LM head and loss (beyond the logits themselves): bytes per token per hidden unit. */
export const HEAD_H: { readonly [K in BlockKind]: { readonly full: number; readonly lora: number } } = {
  llama: { full: 8, lora: 4 },
  gemma: { full: 10, lora: 4 },
  bert: { full: 8, lora: 4 },
  gpt: { full: 4, lora: 2 },
  neox: { full: 4, lora: 2 },
  phi: { full: 4, lora: 2 },
  // And the LayerNorm after the embeddings keeps its input.
  bloom: { full: 6, lora: 4 },
  falcon: { full: 4, lora: 2 },
  falconNew: { full: 4, lora: 2 },
};

/** Per-token constant of the head (fp32 norm statistics and loss bookkeeping). */
export const HEAD_PER_TOKEN = 12;

/** The measured layout of each GPT-style block. */
const GPT_BLOCK_KIND: { readonly [B in GptBlock]: BlockKind } = {
  gpt2: "gpt",
  "gpt-neox": "neox",
  phi: "phi",
  bloom: "bloom",
  falcon: "falcon",
  "falcon-new-decoder": "falconNew",
};

/** The block layout of an architecture. */
export function blockKind(m: Pick<ModelArchitecture, "type" | "mlp" | "gptBlock">): BlockKind {
  if (m.type === "encoder-embedding" || m.type === "encoder-decoder") return "bert";
  if (m.mlp === "geglu") return "gemma";
  if (m.mlp === "swiglu") return "llama";
  return GPT_BLOCK_KIND[m.gptBlock ?? "gpt2"];
}

/** Adapter settings that change what is saved. */
export interface LoraActivationInput {
  readonly rank: number;
  /** Adapted modules, e.g. ["q_proj", "v_proj"] (./lora.ts names them per family). */
  readonly targetModules: readonly string[];
  /** PEFT's `lora_dropout`: above 0 each adapter also keeps the dropout mask of its input. @default 0 */
  readonly dropout?: number;
  /**
   * Whether the adapters' matmuls run in 16 bit: mixed precision (`bf16-mixed`, `fp16-mixed`), where the runtime trains
   * under `torch.autocast` (plain DDP) or DeepSpeed's 16-bit engine (ZeRO). PEFT still casts the input to its fp32
   * adapters' dtype, but the matmul then saves autocast's 16-bit copy of it, and `lora_B` a 16-bit rank-r projection.
   * @default false (the fp32 cast and an fp32 projection are kept)
   */
  readonly autocast?: boolean;
  /**
   * The dtype QLoRA's unquantized parameters train in (model-states.ts {@link unquantizedPrecisionOf}). `fp32` runs the
   * residual stream in fp32: each block keeps ./autocast.ts's `upcast` extra, a checkpoint keeps 4-byte layer inputs,
   * and autocast saves a bf16 copy of the fp32 LM head for backward (./estimate.ts counts both).
   * @default "bf16"
   */
  readonly unquantizedPrecision?: UnquantizedPrecision;
}

/** Whether PEFT's fp32 upcast of QLoRA's unquantized parameters is kept (an fp32 stream over a frozen base). */
export const upcastStream = (lora: LoraActivationInput | undefined): boolean => lora?.unquantizedPrecision === "fp32";

/** How one training step computes, as far as what autograd saves. */
export interface ActivationStep {
  /** LoRA's adapters; absent for full training. */
  readonly lora?: LoraActivationInput | undefined;
  /** Bytes per activation of the measured 16-bit coefficients' dtype: 2 (16 bit) or 4 (fp32). @default 2 */
  readonly bytesPerActivation?: number;
  /** Where dropout masks are made (their size differs). @default "gpu" */
  readonly device?: DropoutDevice;
  /**
   * The step runs under CUDA's `torch.autocast` over the weights as loaded: mixed precision on plain DDP, where the
   * runtime keeps full training's fp32 master weights (./autocast.ts). DeepSpeed's 16-bit engine casts the module
   * instead, a pure 16-bit step.
   * @default false
   */
  readonly cudaAutocast?: boolean;
  /** Sequences per micro-batch ({@link SINGLE_SEQUENCE_EXTRA} applies at 1). @default 1 */
  readonly microBatchSize?: number;
}

/** What CUDA's autocast adds to a step (./autocast.ts), or nothing for a pure step. QLoRA's upcast is always measured so. */
export function autocastExtra(m: ModelArchitecture, step: ActivationStep): AutocastExtra | undefined {
  const extra = AUTOCAST_EXTRA[blockKind(m)];
  if (upcastStream(step.lora)) return extra.upcast ?? unquantizableUpcast(m);
  if (!step.cudaAutocast) return undefined;
  return step.lora ? extra.frozen : extra.full;
}

/** A QLoRA step of a layout bitsandbytes does not quantize: the model checks refuse it before any plan is made. */
function unquantizableUpcast(m: ModelArchitecture): never {
  throw new Error(`${m.family}: QLoRA of a layout bitsandbytes leaves in 16 bit is refused before planning`);
}

/** Whether the residual stream between layers runs in fp32 under the step's autocast (./autocast.ts `fp32Stream`). */
export function runsFp32Stream(m: ModelArchitecture, step: ActivationStep): boolean {
  return autocastExtra(m, step)?.fp32Stream ?? false;
}

/** Bytes per hidden unit of the residual stream between layers (what a checkpoint keeps of each layer's input). */
export function streamBytesPerHidden(m: ModelArchitecture, step: ActivationStep): number {
  return runsFp32Stream(m, step) ? 4 : (step.bytesPerActivation ?? 2);
}

/**
 * Bytes per input feature an adapted layer keeps: the copy of its input that `lora_A` saves (the fp32 cast PEFT makes
 * for its fp32 adapters, 4, or under mixed precision autocast's 16-bit copy of that cast, 2), and with LoRA dropout the
 * mask as well (a 1-byte bool on a GPU, `native_dropout`; PyTorch's CPU dropout keeps an fp32 noise tensor), the
 * dropped copy taking the cast copy's place.
 */
function adapterBytesPerInput(lora: LoraActivationInput, device: DropoutDevice): number {
  const mask = (lora.dropout ?? 0) > 0 ? (device === "gpu" ? 1 : 4) : 0;
  return adapterComputeBytes(lora) + mask;
}

/** Bytes per element of what the adapters' matmuls save: 2 under mixed precision, else PEFT's fp32. */
const adapterComputeBytes = (lora: LoraActivationInput): number => (lora.autocast ? 2 : 4);

/** Bytes per token the adapters keep: their inputs' casts (and masks), and each one's rank-r projection. */
function adapterBytesPerToken(
  m: ModelArchitecture,
  lora: LoraActivationInput,
  device: DropoutDevice,
  where: "perLayer" | "once",
): number {
  const { inputFeatures, layers } = adapterFootprint(m, lora.targetModules)[where];
  return adapterBytesPerInput(lora, device) * inputFeatures + adapterComputeBytes(lora) * lora.rank * layers;
}

/**
 * Bytes saved per token per layer: the measured coefficients scaled from 16-bit by `bytesPerActivation / 2`, what CUDA's
 * autocast adds (./autocast.ts), and for LoRA the frozen block plus each adapted layer's cast input (4 bytes per
 * feature, 2 under mixed precision, plus a dropout mask) and rank-r projection. Adapting every linear layer therefore
 * keeps more than full fine-tuning does (measured).
 */
export function layerBytesPerToken(m: ModelArchitecture, step: ActivationStep = {}): number {
  const { lora, bytesPerActivation = 2, device = "gpu", microBatchSize = 1 } = step;
  const kind = blockKind(m);
  const single = microBatchSize === 1 && !upcastStream(lora) ? coefficientBytes(m, SINGLE_SEQUENCE_EXTRA[kind]) : 0;
  const bytes = coefficientBytes(m, lora ? FROZEN_LAYER[kind] : FULL_LAYER[kind]) + single;
  const adapters = lora ? adapterBytesPerToken(m, lora, device, "perLayer") : 0;
  const extra = autocastExtra(m, step);
  return (bytes * bytesPerActivation) / 2 + adapters + (extra ? coefficientBytes(m, extra.layer) : 0);
}

/**
 * Bytes saved per token by the final norm and head, excluding the logits (./loss.ts). An adapter on `lm_head` keeps
 * its cast input and its rank-r projection like the blocks' adapters.
 */
export function headBytesPerToken(m: ModelArchitecture, step: ActivationStep = {}): number {
  const { lora, bytesPerActivation = 2, device = "gpu" } = step;
  const h = HEAD_H[blockKind(m)];
  const adapter = lora ? adapterBytesPerToken(m, lora, device, "once") : 0;
  const extra = autocastExtra(m, step)?.head;
  const autocast = extra ? extra.h * m.hiddenSize + extra.perToken : 0;
  return ((lora ? h.lora : h.full) * m.hiddenSize * bytesPerActivation) / 2 + HEAD_PER_TOKEN + adapter + autocast;
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
