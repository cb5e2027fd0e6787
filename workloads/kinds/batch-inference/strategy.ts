/** BatchInference: offline LLM inference over a dataset with a fixed pool of vLLM replicas, sweeping generation settings. */
import type { WorkerNeeds } from "../../../core/cluster/shape";
import { resolveModel } from "../../../core/config/model-ref";
import { BatchInferenceSpecSchema, type BatchInferenceSpec } from "../../../core/config/workloads";
import type { IssueCollector } from "../../../core/errors";
import { planServingMemory, utilizationProblem } from "../../../core/memory/plan-inference";
import type { GpuPoolPlan } from "../../../core/pools";
import { dataSections, tuneData } from "../ray-data/tune";
import { checkContextLength } from "../shared/context-length";
import { checkVllmEngine } from "./engine";
import type { InferenceMemoryPlan } from "../api/plans";
import type { KindStrategy } from "../api/strategy";
import type { SweepSection } from "../../contract/document";
import { inferenceForecast } from "../ray-data/forecast";

const NEEDS: WorkerNeeds = {
  objectStoreFraction: 0.3,
  shmExtraGiBPerGpu: 1,
  minHeapGiBPerGpu: 4,
  why: {
    objectStore: "prompts and generations stream through Ray Data blocks; Ray's 30% default",
    shmExtra: "the inference engine's worker processes",
    minHeap: "the engine loads weights through host memory",
  },
};

/** Cartesian product of the sweep, keys sorted. */
export function sweepGrid(
  parameters: Readonly<Record<string, readonly (string | number | boolean)[]>>,
): Record<string, string | number | boolean>[] {
  let grid: Record<string, string | number | boolean>[] = [{}];
  for (const key of Object.keys(parameters).sort())
    grid = grid.flatMap((g) => parameters[key]!.map((v) => ({ ...g, [key]: v })));
  return grid;
}

/** Tensor parallelism that fits a node divides the GPUs (once the cluster shape accepts them): every replica is whole. */
function checkGpus(spec: BatchInferenceSpec, pool: GpuPoolPlan, path: string, issues: IssueCollector): void {
  const tp = spec.tensorParallelSize;
  if (tp !== undefined && tp <= pool.node.gpus && spec.gpus % tp !== 0)
    issues.add(`${path}.tensorParallelSize`, `must divide gpus (${spec.gpus}) so every replica gets ${tp} GPUs`, tp);
}

/**
 * Tensor parallelism stays inside a node; prompt and generation fit the model's context; the memory share leaves room
 * for the CUDA context; a pinned vLLM is one the plan models (./engine.ts).
 */
function check(spec: BatchInferenceSpec, pool: GpuPoolPlan, path: string, issues: IssueCollector): void {
  const gpusPerNode = pool.node.gpus;
  const tp = spec.tensorParallelSize;
  if (tp !== undefined && tp > gpusPerNode) {
    issues.add(
      `${path}.tensorParallelSize`,
      `must be at most ${gpusPerNode}, the GPUs of one ${pool.instanceType} node (tensor parallelism stays inside a node)`,
      tp,
    );
  }
  checkContextLength(
    resolveModel(spec.model),
    spec.maxPromptTokens + spec.maxNewTokens,
    { path: `${path}.maxPromptTokens`, value: spec.maxPromptTokens },
    issues,
  );
  const share = utilizationProblem(spec.gpuMemoryUtilization, pool.node.usableGpuMemoryGiB);
  if (share) issues.add(`${path}.gpuMemoryUtilization`, share, spec.gpuMemoryUtilization);
  checkVllmEngine(spec, path, issues);
}

function planMemory(spec: BatchInferenceSpec, pool: GpuPoolPlan): InferenceMemoryPlan {
  const model = resolveModel(spec.model);
  const plan = planServingMemory({
    model,
    gpus: spec.gpus,
    gpusPerNode: pool.node.gpus,
    maxPromptTokens: spec.maxPromptTokens,
    maxNewTokens: spec.maxNewTokens,
    gpuMemoryUtilization: spec.gpuMemoryUtilization,
    tensorParallelSize: spec.tensorParallelSize,
    usableGiB: pool.node.usableGpuMemoryGiB,
  });
  const knobs = {
    tensorParallelSize: plan.tensorParallelSize,
    replicas: plan.replicas,
    gpuMemoryUtilization: plan.gpuMemoryUtilization,
    maxConcurrentSequences: plan.maxConcurrentSequences,
    gpus: spec.gpus,
    maxModelLength: spec.maxPromptTokens + spec.maxNewTokens,
    maxNewTokens: spec.maxNewTokens,
    maxBatchedTokens: plan.maxBatchedTokens,
  };
  const { memory, fits, decisions, advice, kvCacheBytesPerToken, maxConcurrentSequences } = plan;
  const kvCacheTokens = memory.kvCacheTokens;
  return { model, memory, fits, knobs, decisions, advice, kvCacheBytesPerToken, maxConcurrentSequences, kvCacheTokens };
}

const SWEEP_REASON =
  "each prompt becomes one row per setting, so Ray Data spreads the whole sweep over every replica " +
  "and no replica idles while another finishes its settings";

export const BATCH_INFERENCE: KindStrategy<"BatchInference"> = {
  schema: BatchInferenceSpecSchema,
  rayResource: "RayJob",
  needs: NEEDS,
  check,
  checkGpus,
  planMemory,
  tune({ spec, memory, shape, environment, path }) {
    const grid = sweepGrid(spec.sweep); // at most MAX_SWEEP_SETTINGS combinations (schema)
    const sweep: SweepSection = { parameters: spec.sweep, grid, rowsPerPrompt: grid.length };
    const tuned = tuneData(
      {
        spec,
        shape,
        environment,
        gpusPerActor: memory.knobs.tensorParallelSize,
        batchSizePerActor: Math.max(1, memory.maxConcurrentSequences),
        sequenceTokens: memory.knobs.maxModelLength,
        outputBytesPerRow: 4 * spec.maxNewTokens,
        rowsPerInputRow: grid.length,
        path,
      },
      sweep,
    );
    return {
      ...tuned,
      decisions: [
        ...tuned.decisions,
        { key: "inference.sweep", value: `${grid.length} setting(s)`, reason: SWEEP_REASON },
      ],
    };
  },
  forecast: inferenceForecast,
  document({ spec, tuning, storagePrefix }) {
    const sections = dataSections(tuning, spec.outputUri ?? `${storagePrefix}results/${spec.name}/`);
    return { sections: { ...sections, sweep: tuning.data.sweep! }, files: {} };
  },
};
