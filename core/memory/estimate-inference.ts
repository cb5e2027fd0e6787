/**
 * Inference memory: encoder forwards for embeddings, and vLLM-style LLM serving. Bytes inside, GiB outside.
 */
import { GIB } from "../quantity";
import { kvCacheBytesPerToken, type ModelArchitecture } from "../models";
import type { AttentionImplementation } from "../models/types";
import { attentionInferenceBytes, defaultAttention } from "./attention";
import { finishEstimate, FRAMEWORK, type MemoryEstimate, type MemoryParts } from "./estimate";

/**
 * Forward working set of a no-grad transformer layer, per token, at `bytes` per element: the MLP's two
 * intermediate-size tensors (up projection and activation) and the hidden-size tensors around attention, plus the
 * layer's output. Measured on CPU at 2·(2i + 2h) (test/data/attention-calibration.json, `inference` rows); planned with
 * room for the GPU kernels' own temporaries.
 */
export function forwardWorkingSetBytesPerToken(
  m: Pick<ModelArchitecture, "hiddenSize" | "intermediateSize">,
  bytes = 2,
): number {
  return bytes * (2 * m.intermediateSize + 5 * m.hiddenSize);
}

/**
 * Memory an encoder forward holds besides its weights and working set, whatever the batch: cuBLAS workspaces (allocated
 * through PyTorch's caching allocator, so inside `max_memory_allocated`), the embedding output and position buffers.
 * transformers' BERT SDPA benchmark (A100, fp16, bert-base-uncased) peaks at 282.661 MB for 1 × 128 tokens, 45 MiB
 * above its 16-bit weights; 64 MiB keeps a margin.
 */
export const ENCODER_FIXED_OVERHEAD_BYTES = 64 * 2 ** 20;

/** The parts of an inference estimate: no gradients, optimizer, buffers or logits. */
function inferenceParts(weights: number, activations: number, kvCache: number): MemoryParts {
  const zero = { gradients: 0, optimizerStates: 0, communicationBuffers: 0, logits: 0 };
  return { ...zero, weights, activations, kvCache, peakBytes: weights + activations + kvCache };
}

/** Encoder inference (embeddings): 16-bit weights, fixed overhead, one layer's working set and attention for the batch. */
export function estimateEncoderInference(args: {
  model: ModelArchitecture;
  batchSize: number;
  sequenceLength: number;
  attention?: AttentionImplementation | undefined;
  usableGiB: number;
  /** @default 2 (fp16 weights and activations, as the embedding example loads them) */
  bytesPerElement?: number;
}): MemoryEstimate {
  const { model: m, batchSize: b, sequenceLength: s } = args;
  const bytes = args.bytesPerElement ?? 2;
  const weights = bytes * m.parameters;
  const attention = attentionInferenceBytes(m, args.attention ?? defaultAttention(m), {
    batch: b,
    seq: s,
    bytesPerActivation: bytes,
  });
  const activations = b * s * forwardWorkingSetBytesPerToken(m, bytes) + attention + ENCODER_FIXED_OVERHEAD_BYTES;
  return finishEstimate(inferenceParts(weights, activations, 0), 1, args.usableGiB, 0);
}

/**
 * vLLM-style serving: weights split over tensor-parallel ranks, the activation peak of a profiling pass, and a KV
 * cache filling what is left of `gpuMemoryUtilization` of the device after the non-torch memory.
 *
 * The profiling pass (V1 engine, `gpu_model_runner.profile_run`) runs the model over `maxBatchedTokens` (about
 * (6i + 6h)·2 bytes per token; vllm-project/vllm#10517 logs 108–111 KB per token for Llama-3.1-8B), then samples one
 * token for each of `max_num_seqs` dummy requests (`_dummy_sampler_run`): their logits in 16 bit, an fp32 copy, the
 * fp32 probabilities and the exponential noise of random sampling, {@link VLLM_SAMPLER_BYTES_PER_LOGIT} bytes per
 * logit. The peak is the larger of the two. vLLM 0.19 logs on an H100 at max_num_seqs 1024 (llm-d-planner's
 * accuracy sweep) show the sampler setting the peak: 1.89 GiB for Llama-3.1-8B, 2.21 for Qwen2.5-7B, 3.63 for
 * gemma-7b, 14.9–15.5 bytes per logit.
 *
 * Non-torch memory: 0.25 GiB on one GPU in those logs (0.35 in #10517); with tensor parallelism 2.07–2.21 GiB per GPU
 * (NCCL and custom all-reduce buffers), planned at {@link VLLM_NON_TORCH_TP_GIB}.
 */
export const VLLM_NON_TORCH_GIB = 0.35;
/** Non-torch memory per GPU with tensor parallelism (see above). */
export const VLLM_NON_TORCH_TP_GIB = 2.25;
/** Bytes per logit of the profile's sampling step (2 + 4 + 4 + 4, rounded up to cover the logged 14.9–15.5). */
export const VLLM_SAMPLER_BYTES_PER_LOGIT = 16;

/** Non-torch memory of one GPU at tensor parallelism `tp`, GiB. */
function vllmNonTorchGiB(tp: number): number {
  return tp > 1 ? VLLM_NON_TORCH_TP_GIB : VLLM_NON_TORCH_GIB;
}

/** Bytes of the profiling pass's forward over `tokens` tokens on one of `tp` GPUs. */
function vllmForwardProfileBytes(m: ModelArchitecture, tokens: number, tp: number): number {
  return (tokens * 2 * (3 * m.intermediateSize + 3 * m.hiddenSize)) / tp;
}

/**
 * Tokens vLLM schedules per step (`max_num_batched_tokens`), planned as the knob `maxBatchedTokens` and passed by
 * ray_gpu.examples.infer with chunked prefill on. The V1 engine always chunks prefills, so its profiling pass runs this
 * many tokens whatever `max_model_len` is. The value is vLLM's own default for `LLM(...)` (usage context LLM_CLASS) on
 * GPUs under 70 GiB
 * (vllm-project/vllm `vllm/engine/arg_utils.py`, `_set_default_args`: "V1 uses chunked prefills ... by default",
 * `UsageContext.LLM_CLASS: 8192`, and 16384 only where `device_memory >= 70 * GiB_bytes and "a100" not in
 * device_name`). An A10G reports 21.99 GiB, so 8192.
 */
export const VLLM_LLM_CLASS_MAX_BATCHED_TOKENS = 8192;

/**
 * The oldest vLLM whose memory the serving plan models: the V1 engine as 0.19.0 logs it (the published cases of
 * docs/memory.md), with chunked prefill always on, a profile of `max_num_batched_tokens` tokens that samples
 * `max_num_seqs` requests, and the CUDA context outside `gpu_memory_utilization`. Older engines measured memory
 * otherwise: the V0 engine profiles `max_model_len` tokens unless chunked prefill is enabled, and what counts inside
 * the share changed from release to release (vllm-project/vllm#9352, #10511 and #12126 in V0; the V1 worker counted
 * every byte in use on the device as non-torch memory until #18974 and #19312, June 2025). A plan of such an engine
 * could promise a KV cache the engine does not allocate, so a job that pins one is refused.
 */
export const VLLM_MODELLED_FROM = { major: 0, minor: 19 } as const;

export interface ServingEstimate extends MemoryEstimate {
  readonly kvCacheBytesPerToken: number;
  readonly kvCacheTokens: number;
}

export function estimateLlmServing(args: {
  model: ModelArchitecture;
  tensorParallel: number;
  gpuMemoryUtilization: number;
  maxBatchedTokens: number;
  /** Requests the profile samples for (`max_num_seqs`; every GPU samples the full vocabulary). */
  samplerSequences: number;
  usableGiB: number;
}): ServingEstimate {
  const m = args.model;
  const weights = (2 * m.parameters) / args.tensorParallel;
  const forward = vllmForwardProfileBytes(m, args.maxBatchedTokens, args.tensorParallel);
  const sampler = args.samplerSequences * m.vocabSize * VLLM_SAMPLER_BYTES_PER_LOGIT;
  const activations = Math.max(forward, sampler);
  const nonTorchGiB = vllmNonTorchGiB(args.tensorParallel);
  const budget = args.gpuMemoryUtilization * args.usableGiB * GIB - nonTorchGiB * GIB;
  const kvPerToken = kvCacheBytesPerToken(m) / args.tensorParallel;
  const kv = Math.max(0, budget - weights - activations);
  const est = finishEstimate(inferenceParts(weights, activations, kv), args.tensorParallel, args.usableGiB, 0);
  // vLLM preallocates its whole budget (utilization x memory, non-torch memory included) at start-up: that is
  // what must fit, plus the CUDA context; no fragmentation headroom on top of a preallocated cache.
  const framework = FRAMEWORK.cudaContextGiB + nonTorchGiB;
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
