/**
 * Per-GPU memory estimates: the predicted peak of `torch.cuda.max_memory_allocated()` and what must fit on the
 * device once the CUDA/NCCL context and allocator headroom are added. Bytes inside, GiB (2^30) outside.
 */
import { GIB } from "../quantity";
import { kvCacheBytesPerToken, type ModelArchitecture } from "../models";
import { headBytesPerToken, layerBytesPerToken, logitsBytesPerToken, type LoraActivationInput } from "./activations";
import type { ModelStates, Precision } from "./model-states";

/**
 * Memory outside the caching allocator's peak. CUDA context with lazy module loading: ~300–500 MiB per process
 * (pytorch/pytorch#109888, #86509); NCCL communicator buffers when several GPUs talk (NVIDIA/nccl `DEFAULT_BUFFSIZE`
 * 4 MiB per channel, tens to hundreds of MiB in practice); and allocator headroom for fragmentation between
 * `max_memory_allocated` and `max_memory_reserved`, kept small by `expandable_segments:True`.
 */
export const FRAMEWORK = { cudaContextGiB: 0.5, ncclGiB: 0.25, allocatorHeadroomFraction: 0.05 } as const;

/** GiB per component; zeros where a component does not apply. */
export interface MemoryBreakdownGiB {
  readonly weights: number;
  readonly gradients: number;
  readonly optimizerStates: number;
  readonly activations: number;
  readonly logits: number;
  readonly kvCache: number;
  readonly framework: number;
  /** weights + gradients + optimizer states, as DeepSpeed counts model states. */
  readonly modelStates: number;
}

/** A memory estimate for one GPU. */
export interface MemoryEstimate {
  /** Predicted peak of `torch.cuda.max_memory_allocated()`, GiB. */
  readonly allocatedPeakGiB: number;
  /** Allocated peak plus CUDA/NCCL context and allocator headroom, GiB. */
  readonly requiredGiB: number;
  readonly usableGiB: number;
  readonly fits: boolean;
  readonly breakdownGiB: MemoryBreakdownGiB;
  /** Host memory per node that offloading needs (DeepSpeed's estimate), GiB; 0 without offload. */
  readonly cpuOffloadGiBPerNode: number;
}

const r3 = (x: number) => Math.round(x * 1000) / 1000;

function finish(
  parts: Omit<MemoryBreakdownGiB, "framework" | "modelStates"> & { peakBytes: number },
  gpus: number,
  usableGiB: number,
  cpuBytes: number,
  extraFrameworkGiB = 0,
): MemoryEstimate {
  const allocated = parts.peakBytes / GIB;
  const framework =
    FRAMEWORK.cudaContextGiB +
    (gpus > 1 ? FRAMEWORK.ncclGiB : 0) +
    FRAMEWORK.allocatorHeadroomFraction * allocated +
    extraFrameworkGiB;
  const required = allocated + framework;
  const b = (x: number) => r3(x / GIB);
  return {
    allocatedPeakGiB: r3(allocated),
    requiredGiB: r3(required),
    usableGiB: usableGiB,
    fits: required <= usableGiB,
    breakdownGiB: {
      weights: b(parts.weights),
      gradients: b(parts.gradients),
      optimizerStates: b(parts.optimizerStates),
      activations: b(parts.activations),
      logits: b(parts.logits),
      kvCache: b(parts.kvCache),
      framework: r3(framework),
      modelStates: b(parts.weights + parts.gradients + parts.optimizerStates),
    },
    cpuOffloadGiBPerNode: r3(cpuBytes / GIB),
  };
}

/** Input of {@link estimateTraining}. */
export interface TrainingMemoryInput {
  readonly model: ModelArchitecture;
  readonly states: ModelStates;
  readonly precision: Precision;
  readonly microBatchSize: number;
  /** LLM tokens per sample, image tokens included. */
  readonly tokensPerSample: number;
  readonly gradientCheckpointing: boolean;
  readonly lora?: LoraActivationInput;
  readonly gpus: number;
  /** Plain DDP over several GPUs keeps gradient buckets as large as the gradients. */
  readonly ddpBuckets: boolean;
  /** Trainable parameters this GPU steps (for the optimizer's temporaries). */
  readonly trainableLocalParameters: number;
  /** Forward working set of a frozen vision tower, bytes. */
  readonly visionBytes?: number;
  readonly usableGiB: number;
}

/**
 * Training peak. Activations and logits peak at the start of backward, before gradients exist (they are set to
 * None between steps); gradients and the optimizer's temporaries peak at the step, after activations are freed:
 * peak = weights + optimizer states + DDP buckets + max(activations + logits, gradients + step temporaries).
 */
export function estimateTraining(t: TrainingMemoryInput): MemoryEstimate {
  const m = t.model;
  const bytesPerAct = t.precision === "fp32" ? 4 : 2;
  const tokens = t.microBatchSize * t.tokensPerSample;
  const layers = m.layers + (m.decoderLayers ?? 0);
  const perLayer = layerBytesPerToken(m, t.lora, bytesPerAct);
  const layerInputs = t.gradientCheckpointing ? layers * m.hiddenSize * bytesPerAct + perLayer : layers * perLayer;
  const activations =
    tokens * (layerInputs + headBytesPerToken(m, t.lora !== undefined, bytesPerAct)) + (t.visionBytes ?? 0);
  const logits = m.type === "encoder-embedding" ? 0 : tokens * logitsBytesPerToken(m);
  const buckets = t.ddpBuckets ? t.states.gradients : 0;
  const stepTemporaries = 4 * t.trainableLocalParameters;
  const peak =
    t.states.weights +
    t.states.optimizerStates +
    buckets +
    Math.max(activations + logits, t.states.gradients + stepTemporaries);
  return finish(
    {
      weights: t.states.weights,
      gradients: t.states.gradients + buckets,
      optimizerStates: t.states.optimizerStates,
      activations,
      logits,
      kvCache: 0,
      peakBytes: peak,
    },
    t.gpus,
    t.usableGiB,
    t.states.cpuBytesPerNode,
  );
}

/** Forward working set of a no-grad transformer pass, per token: two intermediate-size and a few hidden-size tensors. */
export function forwardWorkingSetBytesPerToken(
  m: Pick<ModelArchitecture, "hiddenSize" | "intermediateSize">,
  bytes = 2,
): number {
  return bytes * (2 * m.intermediateSize + 4 * m.hiddenSize);
}

/** Encoder inference (embeddings): 16-bit weights plus one layer's working set for the batch. */
export function estimateEncoderInference(args: {
  model: ModelArchitecture;
  batchSize: number;
  sequenceLength: number;
  usableGiB: number;
}): MemoryEstimate {
  const { model: m } = args;
  const weights = 2 * m.parameters;
  const tokens = args.batchSize * args.sequenceLength;
  const activations = tokens * forwardWorkingSetBytesPerToken(m) + tokens * m.hiddenSize * 2;
  return finish(
    { weights, gradients: 0, optimizerStates: 0, activations, logits: 0, kvCache: 0, peakBytes: weights + activations },
    1,
    args.usableGiB,
    0,
  );
}

/**
 * vLLM-style serving: weights split over tensor-parallel ranks, the activation peak of a profiling pass over
 * `maxBatchedTokens` (about (6i + 6h)·2 bytes per token; vllm-project/vllm#10517 logs 108–111 KB per token for
 * Llama-3.1-8B), and a KV cache filling what is left of `gpuMemoryUtilization` of the device after the non-torch
 * memory (CUDA graphs, NCCL; 0.35 GiB in the same log).
 */
export const VLLM_NON_TORCH_GIB = 0.35;

export interface ServingEstimate extends MemoryEstimate {
  readonly kvCacheBytesPerToken: number;
  readonly kvCacheTokens: number;
}

export function estimateLlmServing(args: {
  model: ModelArchitecture;
  tensorParallel: number;
  gpuMemoryUtilization: number;
  maxBatchedTokens: number;
  usableGiB: number;
}): ServingEstimate {
  const m = args.model;
  const weights = (2 * m.parameters) / args.tensorParallel;
  const activations = (args.maxBatchedTokens * 2 * (3 * m.intermediateSize + 3 * m.hiddenSize)) / args.tensorParallel;
  const budget = args.gpuMemoryUtilization * args.usableGiB * GIB - VLLM_NON_TORCH_GIB * GIB;
  const kvPerToken = kvCacheBytesPerToken(m) / args.tensorParallel;
  const kv = Math.max(0, budget - weights - activations);
  const est = finish(
    {
      weights,
      gradients: 0,
      optimizerStates: 0,
      activations,
      logits: 0,
      kvCache: kv,
      peakBytes: weights + activations + kv,
    },
    args.tensorParallel,
    args.usableGiB,
    0,
  );
  // vLLM preallocates its whole budget (utilization x memory, non-torch memory included) at start-up: that is
  // what must fit, plus the CUDA context; no fragmentation headroom on top of a preallocated cache.
  const framework = FRAMEWORK.cudaContextGiB + VLLM_NON_TORCH_GIB;
  const required = Math.round((est.allocatedPeakGiB + framework) * 1000) / 1000;
  return {
    ...est,
    requiredGiB: required,
    breakdownGiB: { ...est.breakdownGiB, framework },
    fits: kv > 0 && required <= args.usableGiB,
    kvCacheBytesPerToken: kvPerToken,
    kvCacheTokens: Math.floor(kv / kvPerToken),
  };
}
