/**
 * Each kind's work and its time: training steps from rows and epochs (or steps), embedding rows against the GPUs and
 * the CPUs that tokenize for them, and vLLM requests over the engines. Pure: the workload strategies pass the planned
 * knobs and the pool's figures in.
 */
import type { ModelArchitecture } from "../models/types";
import { MAX_NUM_SEQS } from "../memory/plan-inference";
import { engineTime, encoderRowsPerSecond, tokenizerRowsPerSecond } from "./inference";
import type { WorkTime } from "./job";
import type { ForecastWork, GpuFigures, StepBreakdown } from "./types";

/**
 * Characters of English text per token: OpenAI's rule of thumb for its tokenizers ("What are tokens and how to count
 * them?", help.openai.com), close to Llama's and BERT's on prose.
 */
export const CHARS_PER_TOKEN = 4;

/** Text tokens of a row of `avgTextChars` characters. */
export const textTokens = (avgTextChars: number) => Math.max(1, Math.ceil(avgTextChars / CHARS_PER_TOKEN));

/** A result or why there is none. */
export type Maybe<T> = { readonly value: T } | { readonly unavailable: string };

/** How much a training job trains, as its spec says it. */
export interface TrainingWorkSpec {
  readonly rows: number | undefined;
  readonly epochs: number | undefined;
  readonly steps: number | undefined;
  readonly globalBatchSize: number;
}

/** Optimizer steps of the job: `steps`, or `rows × epochs` samples in global batches. */
export function trainingSteps(w: TrainingWorkSpec): Maybe<ForecastWork> {
  if (w.steps !== undefined) return { value: { unit: "optimizer steps", count: w.steps, from: `steps: ${w.steps}` } };
  if (w.rows === undefined)
    return {
      unavailable:
        "the spec does not say how much the job trains: set dataset.rows (and epochs, default 1) or steps to forecast",
    };
  const epochs = w.epochs ?? 1;
  const count = Math.ceil((w.rows * epochs) / w.globalBatchSize);
  const from = `${w.rows} rows × ${epochs} epoch${epochs === 1 ? "" : "s"} / ${w.globalBatchSize} samples per step`;
  return { value: { unit: "optimizer steps", count, from } };
}

/** A training job's work time: its steps at the step model's time. */
export function trainingWorkTime(work: ForecastWork, step: StepBreakdown, model: ModelArchitecture): WorkTime {
  return {
    work,
    busySeconds: step.busySeconds * work.count,
    waitSeconds: step.waitSeconds * work.count,
    unitSeconds: step.busySeconds + step.waitSeconds,
    bound: step.bound,
    modelBytes: model.parameters * 2,
  };
}

/** What an embedding pipeline's time is computed from. */
export interface EmbeddingWorkInput {
  readonly model: ModelArchitecture;
  /** Rows the run reads (the dataset's, times the environment's sample fraction). */
  readonly rows: number;
  readonly sequenceTokens: number;
  /** Tokens of text per row before padding: what the tokenizer works on. */
  readonly textTokens: number;
  readonly batchSize: number;
  readonly gpus: number;
  /** CPU tasks that tokenize (the plan's `preprocessConcurrency`). */
  readonly preprocessCpus: number;
  readonly gpu: GpuFigures;
}

/** Rows at the pace of the slower of the GPUs and the tokenizing CPUs. */
export function embeddingWorkTime(i: EmbeddingWorkInput, from: string): WorkTime {
  const gpuRate = i.gpus * encoderRowsPerSecond({ ...i });
  const cpuRate = tokenizerRowsPerSecond(i.preprocessCpus, i.textTokens);
  const busy = i.rows / gpuRate;
  const total = i.rows / Math.min(gpuRate, cpuRate);
  return {
    work: { unit: "rows", count: i.rows, from },
    busySeconds: busy,
    waitSeconds: total - busy,
    unitSeconds: (i.batchSize * i.gpus) / gpuRate,
    bound: cpuRate < gpuRate ? "cpu-preprocessing" : "gpu-compute",
    modelBytes: i.model.parameters * 2,
  };
}

/** What a batch-inference job's time is computed from. */
export interface InferenceWorkInput {
  readonly model: ModelArchitecture;
  readonly requests: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly tensorParallelSize: number;
  readonly replicas: number;
  /** Tokens one replica's KV cache holds. */
  readonly kvCacheTokens: number;
  readonly kvCacheBytesPerToken: number;
  readonly gpu: GpuFigures;
}

/**
 * Sequences an engine decodes together: as many of the average length as its KV cache holds (vLLM admits a request
 * while its blocks fit), at most `max_num_seqs`.
 */
export const concurrentSequences = (kvCacheTokens: number, promptTokens: number, outputTokens: number) =>
  Math.max(1, Math.min(MAX_NUM_SEQS, Math.floor(kvCacheTokens / (promptTokens + outputTokens))));

/** Requests split evenly over the engines, each prefilling and decoding its share. */
export function inferenceWorkTime(i: InferenceWorkInput, from: string): WorkTime {
  const perEngine = Math.ceil(i.requests / i.replicas);
  const t = engineTime({
    ...i,
    requests: perEngine,
    concurrentSequences: concurrentSequences(i.kvCacheTokens, i.promptTokens, i.outputTokens),
    weightBytes: 2,
  });
  return {
    work: { unit: "requests", count: i.requests, from },
    busySeconds: t.seconds,
    waitSeconds: 0,
    unitSeconds: t.decodeStepSeconds,
    bound: t.bound,
    modelBytes: i.model.parameters * 2,
  };
}
