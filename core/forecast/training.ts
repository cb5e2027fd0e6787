/**
 * Step time of a data-parallel training job (DDP or DeepSpeed ZeRO, full, LoRA or QLoRA): the micro-batches' compute at
 * a calibrated share of the GPU's peak, the memory-bound kernels (the optimizer's update, QLoRA's dequantization) at a
 * calibrated share of its bandwidth, and the gradient and parameter collectives over the slowest link the ring crosses,
 * less what overlaps the backward pass. Pure; calibrated in ./calibration.ts against published runs.
 */
import type { OptimizerStep } from "../memory/buffers";
import type { Optimizer } from "../memory/model-states";
import type { ModelArchitecture } from "../models/types";
import {
  ACTIVATION_HIDDEN_TENSORS,
  ACTIVATION_INTERMEDIATE_TENSORS,
  ADAPTER_BYTES_PER_FEATURE,
  BANDWIDTH_EFFICIENCY,
  OVERLAP,
  trainingMfu,
} from "./calibration";
import { matmulParameters, trainingFlopsPerToken, type TrainingMethod } from "./flops";
import type { GpuFigures, Links, StepBreakdown } from "./types";

/** What one optimizer step of a training job is made of. */
export interface TrainingStepInput {
  readonly model: ModelArchitecture;
  readonly method: TrainingMethod;
  readonly trainableParameters: number;
  /**
   * Input and output features of every adapted module, all layers (a LoRA's trainable weights over its rank; 0 for a
   * full fine-tune): PEFT casts each adapted module's input to the fp32 adapter and its output back.
   */
  readonly adapterFeatures: number;
  /** Tokens of one sample (text and image tokens), as the runtime pads them. */
  readonly sampleTokens: number;
  readonly microBatchSize: number;
  /** Micro-batches each GPU runs per optimizer step. */
  readonly gradientAccumulation: number;
  readonly gpus: number;
  readonly gpusPerNode: number;
  /** 0 is plain DDP. */
  readonly zeroStage: 0 | 1 | 2 | 3;
  readonly gradientCheckpointing: boolean;
  /** Bytes of one gradient the collectives move (4 for fp32 master weights and adapters, 2 for pure bf16). */
  readonly gradientBytes: number;
  /** Bytes the optimizer's update reads and writes per trainable weight ({@link optimizerBytesPerWeight}). */
  readonly optimizerBytesPerWeight: number;
  readonly gpu: GpuFigures;
  readonly links: Links;
}

/**
 * Tensors AdamW's update reads or writes per weight, by how it steps: fused, one kernel reads weight, gradient and
 * both moments and writes three back (7); foreach and for-loop run PyTorch's `_multi_tensor_adamw` op by op (decay,
 * lerp, mul, addcmul, sqrt, div, add, addcdiv: 20 reads and writes, torch/optim/adamw.py).
 */
export const ADAMW_TENSOR_PASSES: { readonly [S in OptimizerStep]: number } = { fused: 7, foreach: 20, "for-loop": 20 };

/**
 * Bytes each optimizer's update moves per trainable weight, with `width` the bytes of a weight (4, or 2 in pure bf16):
 * AdamW its passes ({@link ADAMW_TENSOR_PASSES}); bitsandbytes' 8-bit AdamW one kernel over the weight (read and
 * written), the gradient and two 1-byte moments (read and written); SGD with momentum the weight, the gradient and the
 * momentum buffer.
 */
const OPTIMIZER_BYTES: { readonly [O in Optimizer]: (step: OptimizerStep, width: number) => number } = {
  adamw: (step, width) => ADAMW_TENSOR_PASSES[step] * width,
  "adamw-8bit": (_step, width) => 3 * width + 4,
  sgd: (_step, width) => 5 * width,
};

/** Bytes `optimizer` moves per trainable weight as the runtime steps it, in pure bf16 or with fp32 weights. */
export const optimizerBytesPerWeight = (optimizer: Optimizer, step: OptimizerStep, pureBf16: boolean) =>
  OPTIMIZER_BYTES[optimizer](step, pureBf16 ? 2 : 4);

/** Bytes AdamW moves per trainable weight: its passes over 4-byte states, or 2-byte ones in pure bf16. */
export const adamwBytesPerWeight = (step: OptimizerStep, pureBf16: boolean) =>
  optimizerBytesPerWeight("adamw", step, pureBf16);
/**
 * Extra bytes QLoRA moves per base weight and pass: bitsandbytes reads the 4-bit weight (0.5 B) and its absmax, and
 * writes and reads back the bf16 copy (2 + 2 B) that the product then uses.
 */
export const DEQUANT_BYTES_PER_WEIGHT = 4.5;
/** Share of a micro-batch's compute that is the backward pass, which DDP's bucketed all-reduce overlaps. */
export const BACKWARD_SHARE = 2 / 3;

const ringBytes = (bytes: number, n: number) => (2 * (n - 1) * bytes) / n;

/** The link a ring over `gpus` is bound by: the node's PCIe within one node, the network across nodes. */
export function ringGBps(i: Pick<TrainingStepInput, "gpus" | "gpusPerNode" | "links">): number {
  return i.gpus > i.gpusPerNode ? Math.min(i.links.intraNodeGBps, i.links.interNodeGBps) : i.links.intraNodeGBps;
}

/**
 * Seconds of one micro-batch's forward and backward on one GPU: the products at the calibrated share of peak, then the
 * memory-bound kernels between them (norms, activations, rotary, residual adds, the adapters' casts), each pass
 * reading and writing the layer's activations.
 */
function microBatchSeconds(i: TrainingStepInput): number {
  const tokens = i.microBatchSize * i.sampleTokens;
  const flops = tokens * trainingFlopsPerToken(i.model, i.sampleTokens, i.trainableParameters, i.gradientCheckpointing);
  const products = flops / (i.gpu.denseBf16Tflops * 1e12 * trainingMfu(i.model, tokens));
  const passes = i.gradientCheckpointing ? 4 : 3;
  const m = i.model;
  const perLayer =
    2 * (ACTIVATION_HIDDEN_TENSORS * m.hiddenSize + ACTIVATION_INTERMEDIATE_TENSORS * m.intermediateSize);
  const bytes = tokens * passes * (m.layers * perLayer + i.adapterFeatures * ADAPTER_BYTES_PER_FEATURE);
  return products + bytes / (i.gpu.memoryBandwidthGBps * 1e9 * BANDWIDTH_EFFICIENCY);
}

/** Seconds per optimizer step of memory-bound kernels: the optimizer's update (sharded by ZeRO) and dequantization. */
function memoryBoundSeconds(i: TrainingStepInput): number {
  const bandwidth = i.gpu.memoryBandwidthGBps * 1e9 * BANDWIDTH_EFFICIENCY;
  const shards = i.zeroStage > 0 ? i.gpus : 1;
  const optimizer = (i.trainableParameters * i.optimizerBytesPerWeight) / shards;
  const passes = i.gradientCheckpointing ? 3 : 2;
  const dequant =
    i.method === "qlora" ? matmulParameters(i.model) * DEQUANT_BYTES_PER_WEIGHT * passes * i.gradientAccumulation : 0;
  return (optimizer + dequant) / bandwidth;
}

/**
 * Seconds per optimizer step of collectives, and of them the part no compute hides. DDP and ZeRO 1-2 reduce the
 * gradients once per step, overlapped with the last micro-batch's backward; ZeRO 3 also gathers the parameters for
 * every forward and backward (and recompute), prefetched under the micro-batch's compute.
 */
function communication(i: TrainingStepInput, microSeconds: number): { seconds: number; exposed: number } {
  if (i.gpus === 1) return { seconds: 0, exposed: 0 };
  const bytesPerSecond = ringGBps(i) * 1e9;
  const gradients = ringBytes(i.trainableParameters * i.gradientBytes, i.gpus) / bytesPerSecond;
  if (i.zeroStage < 3) {
    const exposed = Math.max(0, gradients - OVERLAP * BACKWARD_SHARE * microSeconds);
    return { seconds: gradients, exposed };
  }
  const gathers = i.gradientCheckpointing ? 3 : 2;
  const perMicro = (gathers * ringBytes(i.model.parameters * 2, i.gpus)) / 2 / bytesPerSecond;
  // ZeRO 3 reduce-scatters the gradients: half an all-reduce's bytes.
  const scatter = gradients / 2;
  const seconds = perMicro * i.gradientAccumulation + scatter;
  const exposed = Math.max(0, perMicro - OVERLAP * microSeconds) * i.gradientAccumulation + scatter;
  return { seconds, exposed };
}

/** One optimizer step, split into what keeps the GPUs busy and what they wait for. */
export function trainingStep(i: TrainingStepInput): StepBreakdown {
  const micro = microBatchSeconds(i);
  const compute = micro * i.gradientAccumulation;
  const memory = memoryBoundSeconds(i);
  const comm = communication(i, micro);
  const bound =
    comm.exposed > compute && comm.exposed > memory ? "interconnect" : memory > compute ? "gpu-memory" : "gpu-compute";
  return {
    busySeconds: compute + memory,
    waitSeconds: comm.exposed,
    communicationSeconds: comm.seconds,
    bound: bound === "interconnect" && i.gpus > i.gpusPerNode ? "network" : bound,
  };
}
