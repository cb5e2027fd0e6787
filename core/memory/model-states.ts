/**
 * Model states per GPU (weights, gradients, optimizer states) for full training and for LoRA/QLoRA.
 *
 * Accounting (bytes per parameter):
 * - Plain DDP (ZeRO stage 0), HF "Anatomy of Model's Memory" (transformers `docs/source/en/model_memory_anatomy.md`):
 *   weights 4 (fp32) or 6 (mixed: fp32 plus the 16-bit copy autocast uses), gradients 4, optimizer 8 (AdamW),
 *   2 (8-bit AdamW) or 4 (SGD with momentum): 18 bytes per parameter for mixed-precision AdamW. Pure bf16
 *   (bf16-true) keeps 2 + 2 + 4 = 8.
 * - ZeRO 2 and 3: DeepSpeed's estimator (./deepspeed.ts), split into its terms; other optimizers replace its 8
 *   bytes of Adam states with their own. ZeRO 1 shards the fp32 master, fp32 gradients and states like ZeRO 2,
 *   but keeps the full 16-bit gradients.
 * - LoRA: frozen base weights (16-bit, or NF4 for QLoRA) plus fp32 adapters (PEFT's default
 *   `autocast_adapter_dtype=True`) with fp32 gradients and optimizer states: 16 bytes per adapter parameter.
 * - NF4 (QLoRA paper, Dettmers et al. 2023, §2): 4 bits per weight plus an fp32 absmax per 64 weights
 *   (0.5625 B/param); double quantization stores absmax in 8 bits with an fp32 constant per 256 blocks
 *   (0.5 + 1/64 + 4/(64·256) ≈ 0.5159 B/param). Only linear layers are quantized (the head excepted).
 */
import { zero2ModelStates, zero3ModelStates } from "./deepspeed";

export const PRECISIONS = ["bf16-mixed", "bf16-true", "fp16-mixed", "fp32"] as const;
export type Precision = (typeof PRECISIONS)[number];
/**
 * Whether a precision computes in 16 bit from 32-bit trainable weights (torch.autocast under plain DDP, DeepSpeed's
 * 16-bit engine under ZeRO), keeping a 16-bit copy of each weight beside it.
 */
export const MIXED_PRECISION: { readonly [P in Precision]: boolean } = {
  "bf16-mixed": true,
  "bf16-true": false,
  "fp16-mixed": true,
  fp32: false,
};
/**
 * The 16-bit copies mixed precision makes of `trainable` fp32 parameters for its 16-bit matmuls, bytes: autocast saves
 * each for backward (DeepSpeed's 16-bit engine keeps its 16-bit weights likewise); none in pure bf16 or fp32.
 */
export function autocastCopyBytes(precision: Precision, trainable: number): number {
  return MIXED_PRECISION[precision] ? 2 * trainable : 0;
}
export const OPTIMIZERS = ["adamw", "adamw-8bit", "sgd"] as const;
export type Optimizer = (typeof OPTIMIZERS)[number];
export const OFFLOADS = ["none", "optimizer", "optimizer-and-parameters"] as const;
export type Offload = (typeof OFFLOADS)[number];
export type ZeroStage = 0 | 1 | 2 | 3;
export const QUANTIZATIONS = ["none", "nf4", "nf4-double"] as const;
export type Quantization = (typeof QUANTIZATIONS)[number];

/**
 * The dtype QLoRA's unquantized parameters (embeddings, norms, the LM head, biases) train in. PEFT's
 * `prepare_model_for_kbit_training` casts every 16-bit parameter that is not 4-bit to fp32; `bf16` casts them back
 * (runtime/ray_gpu/examples/common.py `keep_unquantized_in`, which sft.py calls).
 */
export const UNQUANTIZED_PRECISIONS = ["fp32", "bf16"] as const;
export type UnquantizedPrecision = (typeof UNQUANTIZED_PRECISIONS)[number];

/**
 * What QLoRA's unquantized parameters train in. DeepSpeed's 16-bit engine (ZeRO 1 to 3 in 16 bit) casts
 * every floating parameter of the module to 16 bit (`_configure_distributed_model`: `self.module.bfloat16()`), so
 * they are 16-bit there whatever was pinned; under plain DDP the runtime keeps PEFT's fp32 upcast unless the workload
 * pins `bf16`, or trains in pure bf16 (`bf16-true`, no autocast: the upcast is cast back). A base that is not
 * quantized loads in bf16 and has nothing upcast.
 */
export function unquantizedPrecisionOf(s: {
  readonly quantization: Quantization;
  /** The ZeRO stage (0: plain DDP). */
  readonly zeroStage: number;
  readonly precision: Precision;
  readonly pinned?: UnquantizedPrecision | undefined;
}): UnquantizedPrecision {
  if (s.quantization === "none") return "bf16";
  if (s.precision === "bf16-true") return "bf16";
  if (s.zeroStage > 0 && s.precision !== "fp32") return "bf16";
  return s.pinned ?? "fp32";
}

/** Bytes per NF4 weight, single and double quantization. */
export const NF4_BYTES_PER_PARAM = { nf4: 0.5 + 4 / 64, "nf4-double": 0.5 + 1 / 64 + 4 / (64 * 256) } as const;

/** Optimizer state bytes per trainable parameter (states only, no master copy). */
export function optimizerStateBytes(optimizer: Optimizer, statesIn16Bit: boolean): number {
  switch (optimizer) {
    case "adamw":
      return statesIn16Bit ? 4 : 8;
    case "adamw-8bit":
      return 2;
    case "sgd":
      return statesIn16Bit ? 2 : 4;
  }
}

/**
 * Whether trainable weights and their optimizer states are 16-bit: only in pure bf16 full training. LoRA adapters stay
 * fp32 whatever the precision (PEFT's default `autocast_adapter_dtype=True`).
 */
export const trainableStatesIn16Bit = (precision: Precision, lora: boolean): boolean =>
  precision === "bf16-true" && !lora;

/** Bytes a checkpoint holds per trainable parameter: its weight (an fp32 master, or bf16) and its optimizer states. */
export function checkpointBytesPerTrainable(precision: Precision, optimizer: Optimizer, lora: boolean): number {
  const in16Bit = trainableStatesIn16Bit(precision, lora);
  return (in16Bit ? 2 : 4) + optimizerStateBytes(optimizer, in16Bit);
}

/** Model states of one GPU, in bytes; `cpuBytes` is what offloading needs per node. */
export interface ModelStates {
  readonly weights: number;
  readonly gradients: number;
  readonly optimizerStates: number;
  readonly cpuBytesPerNode: number;
}

/** Input of {@link fullTrainingStates}. */
export interface FullStatesInput {
  readonly parameters: number;
  readonly largestLayerParameters: number;
  readonly gpus: number;
  readonly gpusPerNode: number;
  readonly precision: Precision;
  readonly optimizer: Optimizer;
  readonly zeroStage: ZeroStage;
  readonly offload: Offload;
}

/** Plain DDP: every GPU holds everything (mixed precision keeps fp32 weights with a 16-bit copy). */
function ddpStates(s: FullStatesInput): ModelStates {
  const p = s.parameters;
  if (s.precision === "bf16-true")
    return {
      weights: 2 * p,
      gradients: 2 * p,
      optimizerStates: optimizerStateBytes(s.optimizer, true) * p,
      cpuBytesPerNode: 0,
    };
  return {
    weights: 4 * p + autocastCopyBytes(s.precision, p),
    gradients: 4 * p,
    optimizerStates: optimizerStateBytes(s.optimizer, false) * p,
    cpuBytesPerNode: 0,
  };
}

/** DeepSpeed's bytes per parameter: it keeps fp32 master weights and fp32 gradient partitions when it trains in 16 bit. */
function deepspeedBytes(s: FullStatesInput) {
  const fp32 = s.precision === "fp32";
  return {
    fp32,
    optimizer: optimizerStateBytes(s.optimizer, false),
    w16: fp32 ? 4 : 2,
    master: fp32 ? 0 : 4,
    grad32: fp32 ? 0 : 4,
    nodes: Math.max(1, Math.ceil(s.gpus / s.gpusPerNode)),
  };
}

/** ZeRO 1: master weights, fp32 gradients and optimizer states sharded; full 16-bit gradients kept. */
function zero1States(s: FullStatesInput): ModelStates {
  const b = deepspeedBytes(s);
  const p = s.parameters;
  const n = s.gpus;
  return {
    weights: b.w16 * p,
    gradients: b.w16 * p + Math.trunc((b.grad32 * p) / n),
    optimizerStates: Math.trunc(((b.master + b.optimizer) * p) / n),
    cpuBytesPerNode: 0,
  };
}

/** ZeRO 2: gradients sharded too; with offload, DeepSpeed's estimator gives the host memory per node. */
function zero2States(s: FullStatesInput): ModelStates {
  const b = deepspeedBytes(s);
  const p = s.parameters;
  const n = s.gpus;
  if (s.offload !== "none") {
    const ds = zero2ModelStates({ totalParams: p, gpusPerNode: s.gpusPerNode, nodes: b.nodes, cpuOffload: true });
    return { weights: b.w16 * p, gradients: 0, optimizerStates: 0, cpuBytesPerNode: ds.cpuBytes };
  }
  return {
    weights: b.w16 * p,
    gradients: Math.trunc(((b.w16 + b.grad32) * p) / n),
    optimizerStates: Math.trunc(((b.master + b.optimizer) * p) / n),
    cpuBytesPerNode: 0,
  };
}

/** ZeRO 3: weights sharded as well, plus the largest layer gathered; offload moves states (and weights) to the host. */
function zero3States(s: FullStatesInput): ModelStates {
  const b = deepspeedBytes(s);
  const p = s.parameters;
  const n = s.gpus;
  const ds = zero3ModelStates({
    totalParams: p,
    largestLayerParams: s.largestLayerParameters,
    gpusPerNode: s.gpusPerNode,
    nodes: b.nodes,
    cpuOffload: s.offload !== "none",
    cpuOffloadParams: s.offload === "optimizer-and-parameters",
  });
  const gathered = (b.fp32 ? 2 : 1) * ds.largestLayerBytes;
  if (s.offload === "optimizer-and-parameters")
    return { weights: gathered, gradients: 0, optimizerStates: 0, cpuBytesPerNode: ds.cpuBytes };
  const weights = gathered + Math.trunc((b.w16 * p) / n);
  if (s.offload === "optimizer") return { weights, gradients: 0, optimizerStates: 0, cpuBytesPerNode: ds.cpuBytes };
  return {
    weights,
    gradients: Math.trunc((4 * p) / n),
    optimizerStates: Math.trunc(((b.master + b.optimizer) * p) / n),
    cpuBytesPerNode: 0,
  };
}

/** The model-state accounting of each ZeRO stage (0 is plain DDP). */
const STATES_BY_STAGE: Readonly<Record<ZeroStage, (s: FullStatesInput) => ModelStates>> = {
  0: ddpStates,
  1: zero1States,
  2: zero2States,
  3: zero3States,
};

/** Model states per GPU when every parameter trains. */
export function fullTrainingStates(s: FullStatesInput): ModelStates {
  return STATES_BY_STAGE[s.zeroStage](s);
}

/** Input of {@link loraStates}. */
export interface LoraStatesInput {
  readonly parameters: number;
  /** Parameters QLoRA stores in NF4 (../models `quantizedLinearParameters`). */
  readonly quantizableParameters: number;
  readonly adapterParameters: number;
  readonly precision: Precision;
  readonly optimizer: Optimizer;
  readonly quantization: Quantization;
  readonly gpus: number;
  readonly zeroStage: ZeroStage;
  /** @default "bf16" (see {@link unquantizedPrecisionOf}) */
  readonly unquantizedPrecision?: UnquantizedPrecision;
}

/** Bytes of NF4 weights beyond their packed 4 bits: absmax per 64 weights (and, double quantized, its own state). */
export const NF4_STATE_BYTES_PER_PARAM = {
  nf4: NF4_BYTES_PER_PARAM.nf4 - 0.5,
  "nf4-double": NF4_BYTES_PER_PARAM["nf4-double"] - 0.5,
} as const;

/**
 * The frozen base that ZeRO-3 can shard: 16-bit weights, or under QLoRA the unquantized rest (16-bit, or fp32 where
 * PEFT's upcast is kept) and the packed 4-bit data.
 */
function frozenBaseBytes(s: LoraStatesInput): number {
  if (s.quantization === "none") return (s.precision === "fp32" ? 4 : 2) * s.parameters;
  const rest = s.unquantizedPrecision === "fp32" ? 4 : 2;
  return rest * (s.parameters - s.quantizableParameters) + 0.5 * s.quantizableParameters;
}

/**
 * The quantization state of a QLoRA base, whole on every GPU: bitsandbytes keeps it as a Python attribute of each
 * `Linear4bit` (`module.quant_state`), not as a parameter, so ZeRO-3 and FSDP shard only the packed weights and each rank
 * keeps every absmax (bitsandbytes `nn/modules.py`, `fix_4bit_weight_quant_state_from_module`: "the quant state got
 * lost when the parameter got converted. This happens for example for fsdp").
 */
function quantStateBytes(s: LoraStatesInput): number {
  return s.quantization === "none"
    ? 0
    : Math.trunc(NF4_STATE_BYTES_PER_PARAM[s.quantization] * s.quantizableParameters);
}

/**
 * Model states per GPU for LoRA/QLoRA: frozen base plus fp32 adapters (with mixed precision, the 16-bit copy autocast
 * saves for backward too, as for full training), their gradients and optimizer states.
 */
export function loraStates(s: LoraStatesInput): ModelStates {
  const shardBase = s.zeroStage === 3 ? s.gpus : 1;
  const shardStates = s.zeroStage >= 1 ? s.gpus : 1;
  const a = s.adapterParameters;
  return {
    weights:
      Math.trunc(frozenBaseBytes(s) / shardBase) + quantStateBytes(s) + 4 * a + autocastCopyBytes(s.precision, a),
    gradients: Math.trunc((4 * a) / (s.zeroStage >= 2 ? s.gpus : 1)),
    optimizerStates: Math.trunc((optimizerStateBytes(s.optimizer, false) * a) / shardStates),
    cpuBytesPerNode: 0,
  };
}
