/**
 * What `ray-gpu tune` knows of the plan a run came from: the values it applied, what it would pick were the workload to
 * set nothing, and the workload's own settings of the fields `tune` may change.
 */
import type { StackConfig } from "../../core/config/stack";
import { GIB } from "../../core/quantity";
import type { DataFacts, TrainFacts, TunableField, TuneFacts } from "../../core/tune/model";
import type { DataJobTuning } from "../../workloads/kinds/api/plans";
import type { WorkloadPlan } from "../../workloads/workload";

/** Every field `tune` may change: one table, which `facts` and the stack edit both read. */
export const TUNABLE_FIELDS: readonly TunableField[] = [
  "preprocessConcurrency",
  "batchSize",
  "blockSizeMiB",
  "microBatchSize",
];

/** The workload's own settings of the tunable fields, as its entry gives them. */
export function settingsOf(config: StackConfig, name: string): Partial<Record<TunableField, number>> {
  const spec = config.workloads.find((w) => w.name === name) as Partial<Record<TunableField, unknown>> | undefined;
  const set: Partial<Record<TunableField, number>> = {};
  for (const field of TUNABLE_FIELDS) if (typeof spec?.[field] === "number") set[field] = spec[field];
  return set;
}

const dataTuningOf = (plan: WorkloadPlan): DataJobTuning | undefined =>
  plan.tuning.engine === "ray-data" ? plan.tuning : undefined;

function dataFacts(plan: WorkloadPlan, defaults: WorkloadPlan): DataFacts | undefined {
  const tuning = dataTuningOf(plan);
  const plain = dataTuningOf(defaults);
  if (!tuning || !plain) return undefined;
  const { pool, data } = tuning.data;
  const worker = plan.shape.worker;
  return {
    planned: {
      actorPoolSize: pool.actorPoolSize,
      preprocessConcurrency: pool.preprocessConcurrency,
      batchSize: pool.batchSize,
      blockSizeBytes: data.blockSizeBytes,
    },
    defaults: {
      preprocessConcurrency: plain.data.pool.preprocessConcurrency,
      batchSize: plain.data.pool.batchSize,
      blockSizeBytes: plain.data.data.blockSizeBytes,
    },
    blocksInFlight: tuning.workingSetModel.blocksInFlight,
    workingSetShare: tuning.workingSetModel.share,
    plannedStoreBytes: worker.replicas * worker.objectStoreGiB * GIB,
  };
}

const microBatchOf = (plan: WorkloadPlan): number | undefined => {
  const knobs: object = plan.memory.knobs;
  return "microBatchSize" in knobs ? (knobs.microBatchSize as number) : undefined;
};

function trainFacts(plan: WorkloadPlan, defaults: WorkloadPlan): TrainFacts | undefined {
  const microBatchSize = microBatchOf(plan);
  if (microBatchSize === undefined) return undefined;
  const defaultMicroBatchSize = microBatchOf(defaults) ?? microBatchSize;
  return { microBatchSize, defaultMicroBatchSize, usableGiB: plan.memory.memory.usableGiB };
}

/**
 * The facts of `plan`, with `defaults` the same workload planned without its own settings, `set` the workload's own
 * settings and `pinnedByTune` those of them an earlier `tune --write` set.
 */
export function tuneFacts(
  plan: WorkloadPlan,
  defaults: WorkloadPlan,
  set: TuneFacts["set"],
  pinnedByTune: TuneFacts["pinnedByTune"],
): TuneFacts {
  return { workload: plan.name, set, pinnedByTune, data: dataFacts(plan, defaults), train: trainFacts(plan, defaults) };
}
