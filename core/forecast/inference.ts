/**
 * Throughput of the Ray Data kinds: an encoder's batches on a GPU (embeddings) against the CPUs that tokenize for it,
 * and vLLM's prefill (compute-bound) and decode (each step streams the weights and the KV cache, so memory-bound until
 * the batch is large). Pure; calibrated in ./calibration.ts against published runs.
 */
import type { ModelArchitecture } from "../models/types";
import {
  DECODE_BANDWIDTH_EFFICIENCY,
  DECODE_MFU,
  DECODE_STEP_OVERHEAD_SECONDS,
  ENCODER_BATCH_OVERHEAD_SECONDS_PER_LAYER,
  encoderMfu,
  PREFILL_MFU,
  TENSOR_PARALLEL_SECONDS_PER_LAYER,
  TOKENIZER_TOKENS_PER_CPU_SECOND,
} from "./calibration";
import { forwardFlopsPerToken } from "./flops";
import type { GpuFigures } from "./types";

/** An encoder's batches on one GPU. */
export interface EncoderInput {
  readonly model: ModelArchitecture;
  /** Tokens of one row as the runtime pads it (the plan's sequence length). */
  readonly sequenceTokens: number;
  /** Rows of one GPU batch. */
  readonly batchSize: number;
  readonly gpu: GpuFigures;
}

/** Rows per second one whole GPU embeds, batch after batch (fp16, as the runtime loads encoders). */
export function encoderRowsPerSecond(i: EncoderInput): number {
  const tokens = i.batchSize * i.sequenceTokens;
  const flops = tokens * forwardFlopsPerToken(i.model, i.sequenceTokens);
  const compute = flops / (i.gpu.denseBf16Tflops * 1e12 * encoderMfu(i.model, tokens));
  const overhead = ENCODER_BATCH_OVERHEAD_SECONDS_PER_LAYER * i.model.layers;
  return i.batchSize / (compute + overhead);
}

/** Rows per second `cpus` tokenizing tasks turn into token ids, at `textTokens` tokens of text per row. */
export const tokenizerRowsPerSecond = (cpus: number, textTokens: number) =>
  (cpus * TOKENIZER_TOKENS_PER_CPU_SECOND) / Math.max(1, textTokens);

/** One vLLM engine (a tensor-parallel group) over its share of the requests. */
export interface EngineInput {
  readonly model: ModelArchitecture;
  readonly tensorParallelSize: number;
  /** Requests this engine serves. */
  readonly requests: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** Sequences decoded together: what the KV cache holds, capped by the engine's `max_num_seqs`. */
  readonly concurrentSequences: number;
  /** Bytes of KV cache per token, all layers (the memory plan's). */
  readonly kvCacheBytesPerToken: number;
  /** Bytes of one weight as loaded (2 for bf16). */
  readonly weightBytes: number;
  readonly gpu: GpuFigures;
  /**
   * Whether prompt chunks ride in the decode steps (vLLM's V1 engine, the default from 0.8 and the only one from 0.11);
   * the V0 engine before it ran prefills as steps of their own.
   * @default true
   */
  readonly prefillInDecodeSteps?: boolean;
}

/** Seconds of an engine's work, of its prefill alone and of one decode step, and what bounds the work. */
export interface EngineTime {
  readonly seconds: number;
  readonly prefillSeconds: number;
  readonly decodeStepSeconds: number;
  readonly bound: "gpu-memory" | "gpu-compute";
}

/**
 * The prefill of every prompt and the decode steps of every batch of concurrent sequences. vLLM's V1 engine (the only
 * one since 0.11) schedules prompt chunks into the decode steps, so the products of prefill and decode share the steps
 * that stream the weights: the work takes the longer of its compute and its memory traffic, plus each step's own
 * overhead and tensor parallelism's collectives.
 */
export function engineTime(i: EngineInput): EngineTime {
  const tp = i.tensorParallelSize;
  const peak = tp * i.gpu.denseBf16Tflops * 1e12;
  const prefillFlops = i.requests * i.promptTokens * forwardFlopsPerToken(i.model, i.promptTokens);
  const batch = Math.max(1, Math.min(i.concurrentSequences, i.requests));
  const averageContext = i.promptTokens + i.outputTokens / 2;
  const stepBytes = i.model.parameters * i.weightBytes + batch * averageContext * i.kvCacheBytesPerToken;
  const stepMemory = stepBytes / (tp * i.gpu.memoryBandwidthGBps * 1e9 * DECODE_BANDWIDTH_EFFICIENCY);
  const stepCompute = (batch * forwardFlopsPerToken(i.model, averageContext)) / (peak * DECODE_MFU);
  const collectives = tp > 1 ? TENSOR_PARALLEL_SECONDS_PER_LAYER * i.model.layers : 0;
  // Continuous batching refills a finished sequence's slot at once: `batch` tokens come out of every step.
  const steps = (i.requests * i.outputTokens) / batch;
  const prefillSeconds = prefillFlops / (peak * PREFILL_MFU);
  const decodeSeconds = steps * Math.max(stepMemory, stepCompute);
  const overlapped =
    i.prefillInDecodeSteps === false
      ? prefillSeconds + decodeSeconds
      : Math.max(decodeSeconds, prefillSeconds + steps * stepCompute);
  const fixed = steps * (collectives + DECODE_STEP_OVERHEAD_SECONDS);
  return {
    seconds: overlapped + fixed,
    prefillSeconds,
    decodeStepSeconds: Math.max(stepMemory, stepCompute) + collectives + DECODE_STEP_OVERHEAD_SECONDS,
    bound: prefillSeconds + steps * stepCompute > decodeSeconds ? "gpu-compute" : "gpu-memory",
  };
}
