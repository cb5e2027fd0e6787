/**
 * Knobs for inference workloads on an A10G: the largest embedding batch that fits, and for LLM batch inference
 * the smallest tensor-parallel size whose KV cache holds the concurrency the job needs.
 */
import { DecisionLog, type Decision } from "../decisions";
import { kvCacheBytesPerToken, type ModelArchitecture } from "../models";
import type { AttentionImplementation } from "../models/types";
import { defaultAttention } from "./attention";
import { FRAMEWORK, type MemoryEstimate } from "./estimate";
import {
  estimateEncoderInference,
  estimateLlmServing,
  VLLM_LLM_CLASS_MAX_BATCHED_TOKENS,
  type ServingEstimate,
} from "./estimate-inference";
import { SAFETY_MARGIN } from "./training-request";

/** Largest embedding batch tried. */
export const MAX_EMBEDDING_BATCH = 1024;

/** What every inference plan reports besides its knobs. */
interface InferencePlanBase<M extends MemoryEstimate> {
  readonly memory: M;
  readonly fits: boolean;
  readonly decisions: readonly Decision[];
  readonly advice: readonly string[];
}

export interface EmbeddingMemoryPlan extends InferencePlanBase<MemoryEstimate> {
  readonly batchSize: number;
  readonly sequenceLength: number;
  readonly attentionImplementation: AttentionImplementation;
}

/** What {@link planEmbeddingMemory} plans for: the encoder, its sequence length, and what the workload pinned. */
export interface EmbeddingMemoryRequest {
  readonly model: ModelArchitecture;
  readonly sequenceLength: number;
  readonly batchSize?: number | undefined;
  readonly attention?: AttentionImplementation | undefined;
  readonly usableGiB: number;
}

/** The pinned batch, or the largest power of two up to 1024 under the safety margin (else the smallest tried). */
function pickEmbeddingBatch(args: EmbeddingMemoryRequest, attention: AttentionImplementation) {
  const target = args.usableGiB * (1 - SAFETY_MARGIN);
  const sizes =
    args.batchSize !== undefined ? [args.batchSize] : Array.from({ length: 11 }, (_, k) => MAX_EMBEDDING_BATCH >> k);
  const estimate = (batchSize: number) => estimateEncoderInference({ ...args, batchSize, attention });
  for (const batchSize of sizes) {
    const memory = estimate(batchSize);
    if (memory.requiredGiB <= target) return { batchSize, memory };
  }
  const smallest = sizes[sizes.length - 1]!;
  return { batchSize: smallest, memory: estimate(smallest) };
}

/** Batch size for encoder inference: pinned, or the largest power of two up to 1024 that fits. */
export function planEmbeddingMemory(args: EmbeddingMemoryRequest): EmbeddingMemoryPlan {
  const attention = args.attention ?? defaultAttention(args.model);
  const { batchSize, memory } = pickEmbeddingBatch(args, attention);
  const log = new DecisionLog();
  log.decide(
    "attentionImplementation",
    attention,
    args.attention !== undefined
      ? "pinned by the workload"
      : attention === "eager"
        ? "the model has no fused attention in transformers: eager materialises one layer's scores per batch, counted"
        : "fused kernel: no attention scores materialised",
  );
  log.decide(
    "batchSize",
    batchSize,
    `${args.batchSize !== undefined ? "pinned by the workload" : `largest power of two up to ${MAX_EMBEDDING_BATCH} that fits`}: ` +
      `weights ${memory.breakdownGiB.weights} GiB + working set and fixed overhead ${memory.breakdownGiB.activations} GiB ` +
      `for ${batchSize} x ${args.sequenceLength} tokens, requires ${memory.requiredGiB} GiB of ${args.usableGiB}`,
  );
  const advice = memory.fits
    ? []
    : [
        `does not fit: ${memory.requiredGiB} GiB per GPU at batch ${batchSize}; use a smaller batchSize or sequenceLength`,
      ];
  return {
    batchSize,
    sequenceLength: args.sequenceLength,
    attentionImplementation: attention,
    memory,
    fits: memory.fits,
    decisions: log.decisions,
    advice,
  };
}

export interface ServingMemoryPlan extends InferencePlanBase<ServingEstimate> {
  readonly tensorParallelSize: number;
  readonly replicas: number;
  readonly gpuMemoryUtilization: number;
  readonly kvCacheBytesPerToken: number;
  readonly maxConcurrentSequences: number;
  /** Tokens vLLM schedules per step (`max_num_batched_tokens`, chunked prefill): its profiling pass is this size. */
  readonly maxBatchedTokens: number;
}

/** vLLM's default cap on sequences per step (`max_num_seqs`). */
export const MAX_NUM_SEQS = 256;
/** Fewest sequences a replica must hold at once to keep the GPU busy. */
export const MIN_CONCURRENCY = 4;

/** What {@link planServingMemory} plans for: the model, its GPUs, the tokens per sequence, what the workload pinned. */
export interface ServingMemoryRequest {
  readonly model: ModelArchitecture;
  readonly gpus: number;
  readonly gpusPerNode: number;
  readonly maxPromptTokens: number;
  readonly maxNewTokens: number;
  readonly gpuMemoryUtilization: number;
  readonly tensorParallelSize?: number | undefined;
  readonly usableGiB: number;
}

/**
 * Why vLLM cannot split `model` over `tp` GPUs, or undefined. Its QKV projection divides the query heads evenly over the
 * ranks, and the key/value heads too, or replicates them when there are fewer than ranks (vllm
 * `model_executor/layers/linear.py` QKVParallelLinear: `divide(total_num_kv_heads, tp_size)` or
 * `divide(tp_size, total_num_kv_heads)`; `config.py`: "Total number of attention heads must be divisible by tensor
 * parallel size").
 */
export function tensorParallelProblem(model: ModelArchitecture, tp: number): string | undefined {
  if (model.attentionHeads % tp !== 0)
    return `vLLM splits the ${model.attentionHeads} attention heads evenly over the GPUs: ${tp} does not divide them`;
  const kv = model.kvHeads;
  if (kv >= tp ? kv % tp !== 0 : tp % kv !== 0)
    return `vLLM splits (or replicates) the ${kv} key/value heads evenly over the GPUs: ${tp} and ${kv} do not divide`;
  return undefined;
}

/** The pinned size, or the smallest tensor-parallel size whose KV cache holds {@link MIN_CONCURRENCY} sequences. */
function pickTensorParallel(args: ServingMemoryRequest, seqTokens: number) {
  const options =
    args.tensorParallelSize !== undefined
      ? [args.tensorParallelSize]
      : [1, 2, 4, 8].filter(
          (t) => t <= args.gpusPerNode && args.gpus % t === 0 && tensorParallelProblem(args.model, t) === undefined,
        );
  const evaluate = (tp: number) =>
    estimateLlmServing({
      model: args.model,
      tensorParallel: tp,
      gpuMemoryUtilization: args.gpuMemoryUtilization,
      // Chunked prefill: the profile runs vLLM's default batch of tokens, not max_model_len (seqTokens).
      maxBatchedTokens: VLLM_LLM_CLASS_MAX_BATCHED_TOKENS,
      // The runtime passes max_num_seqs = the planned concurrency, at most MAX_NUM_SEQS: profiled at the cap.
      samplerSequences: MAX_NUM_SEQS,
      usableGiB: args.usableGiB,
    });
  for (const tp of options) {
    const memory = evaluate(tp);
    if (memory.fits && Math.floor(memory.kvCacheTokens / seqTokens) >= MIN_CONCURRENCY)
      return { tp, memory, holdsMinimum: true };
  }
  const largest = options[options.length - 1] ?? 1;
  return { tp: largest, memory: evaluate(largest), holdsMinimum: false };
}

/** Why the plan's tensor-parallel size: pinned, the smallest that holds enough sequences, or the largest there is. */
function tensorParallelReason(args: ServingMemoryRequest, plan: { concurrency: number; holdsMinimum: boolean }) {
  const seqTokens = args.maxPromptTokens + args.maxNewTokens;
  if (args.tensorParallelSize !== undefined) return "pinned by the workload";
  const pcie = "GPUs of a g5, g6 or g6e node talk over PCIe only, so tensor parallelism is kept small";
  if (plan.holdsMinimum)
    return `smallest size whose KV cache holds at least ${MIN_CONCURRENCY} sequences of ${seqTokens} tokens; ${pcie}`;
  const held = plan.concurrency === 1 ? "1 sequence" : `${plan.concurrency} sequences`;
  return (
    `no size this pool allows holds ${MIN_CONCURRENCY} sequences of ${seqTokens} tokens: the largest, whose KV cache ` +
    `holds ${held}`
  );
}

/** The reasons of a serving plan: tensor parallelism, memory share, KV bytes per token, concurrency, replicas. */
function servingDecisions(
  args: ServingMemoryRequest,
  plan: { tp: number; memory: ServingEstimate; concurrency: number; holdsMinimum: boolean },
): DecisionLog {
  const { tp, memory, concurrency } = plan;
  const seqTokens = args.maxPromptTokens + args.maxNewTokens;
  const log = new DecisionLog();
  log.decide("tensorParallelSize", tp, tensorParallelReason(args, plan));
  log.decide(
    "gpuMemoryUtilization",
    args.gpuMemoryUtilization,
    `vLLM may use this share of the ${args.usableGiB} GiB; the rest is CUDA context and headroom`,
  );
  log.decide(
    "kvCacheBytesPerToken",
    kvCacheBytesPerToken(args.model),
    `2 (K,V) x ${args.model.layers} layers x ${args.model.kvHeads} KV heads x ${args.model.headDim} head dim x 2 bytes`,
  );
  log.decide(
    "maxConcurrentSequences",
    concurrency,
    `KV cache ${memory.breakdownGiB.kvCache} GiB = ${memory.kvCacheTokens} tokens per replica / ${seqTokens} ` +
      `tokens per sequence (prompt ${args.maxPromptTokens} + new ${args.maxNewTokens}), at most ${MAX_NUM_SEQS}`,
  );
  log.decide("replicas", Math.floor(args.gpus / tp), `${args.gpus} GPUs / tensor parallel ${tp}`);
  log.decide(
    "maxBatchedTokens",
    VLLM_LLM_CLASS_MAX_BATCHED_TOKENS,
    `vLLM's default for LLM(...) on a GPU under 70 GiB, passed explicitly with chunked prefill on: longer prompts ` +
      `are prefilled in chunks of this many tokens, and the activation profile vLLM subtracts before the KV cache is ` +
      `this size, not the model length`,
  );
  return log;
}

/**
 * Why a serving plan does not fit, with its numbers. vLLM takes `gpuMemoryUtilization` of the device for weights,
 * the profiling pass's activations, non-torch memory and the KV cache; the CUDA context stays outside that share
 * (vLLM refuses to start when free memory is below the share), so the share may be at most 1 − context / device.
 */
function servingAdvice(args: ServingMemoryRequest, plan: { memory: ServingEstimate; seqTokens: number }): string[] {
  const { memory, seqTokens } = plan;
  const u = args.gpuMemoryUtilization;
  const round = (x: number) => Math.round(x * 100) / 100;
  const share = utilizationProblem(u, args.usableGiB);
  if (share) return [`gpuMemoryUtilization ${u} ${share}`];
  const b = memory.breakdownGiB;
  return [
    `does not fit: weights ${b.weights} GiB + profiling activations ${b.activations} GiB + non-torch ` +
      `${round(b.framework - FRAMEWORK.cudaContextGiB)} GiB per GPU leave no room in ` +
      `${round(args.usableGiB * u)} GiB (gpuMemoryUtilization ` +
      `${u}) for a ${seqTokens}-token KV cache; use a larger tensorParallelSize, fewer tokens, or a smaller model`,
  ];
}

/**
 * Why vLLM cannot take `gpuMemoryUtilization` of a `usableGiB` GPU, or undefined: the CUDA context stays outside the
 * share, so the share may leave no less than the context.
 */
export function utilizationProblem(u: number, usableGiB: number): string | undefined {
  const round = (x: number) => Math.round(x * 100) / 100;
  const outside = round(usableGiB * (1 - u));
  if (outside >= FRAMEWORK.cudaContextGiB) return undefined;
  return (
    `gives vLLM ${round(usableGiB * u)} GiB of the ${usableGiB} GiB GPU and leaves ${outside} GiB, less than ` +
    `the ${FRAMEWORK.cudaContextGiB} GiB CUDA context outside that share; use at most ` +
    `${Math.floor((1 - FRAMEWORK.cudaContextGiB / usableGiB) * 100) / 100}`
  );
}

/** Tensor parallelism, KV-cache budget and concurrency for offline LLM inference. */
export function planServingMemory(args: ServingMemoryRequest): ServingMemoryPlan {
  const seqTokens = args.maxPromptTokens + args.maxNewTokens;
  const { tp, memory, holdsMinimum } = pickTensorParallel(args, seqTokens);
  const concurrency = Math.min(MAX_NUM_SEQS, Math.floor(memory.kvCacheTokens / seqTokens));
  const fits = memory.fits && concurrency >= 1;
  const advice = fits ? [] : servingAdvice(args, { memory, seqTokens });
  return {
    tensorParallelSize: tp,
    replicas: Math.floor(args.gpus / tp),
    gpuMemoryUtilization: args.gpuMemoryUtilization,
    kvCacheBytesPerToken: kvCacheBytesPerToken(args.model),
    maxConcurrentSequences: concurrency,
    maxBatchedTokens: VLLM_LLM_CLASS_MAX_BATCHED_TOKENS,
    memory,
    fits,
    decisions: servingDecisions(args, { tp, memory, concurrency, holdsMinimum }).decisions,
    advice,
  };
}
