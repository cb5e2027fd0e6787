/**
 * Taking back `tune`'s own earlier pins. `tune --write` marks every value it sets (`TUNE_PIN_MARK`); on a later run
 * that is healthy, each marked pin the run shows unneeded is removed, so the plan decides the field again. A pin the
 * user wrote (no mark) is never taken back. One rule per field `tune` may set; a field `tune` only ever takes out
 * (the preprocessing pool, the batch) has none.
 */
import type { RunRecord } from "./run-record";
import { GPU_MEMORY_HEADROOM, type Change, type TunableField, type TuneFacts } from "./model";
import { gib, mib } from "./words";

type TakeBack = (record: RunRecord, facts: TuneFacts) => Change | undefined;

/**
 * The block size: unneeded when nothing spilled and the plan's own blocks, as many as it counts in flight, fit the
 * share of the workers' measured stores the plan targets.
 */
const blockSizeMiB: TakeBack = (record, facts) => {
  const store = record.objectStore;
  const data = facts.data;
  if (!store || !data || store.spilledBytes > 0) return undefined;
  const own = data.defaults.blockSizeBytes;
  const budget = store.workerCapacityBytes * data.workingSetShare;
  if (data.blocksInFlight * own > budget) return undefined;
  const reason =
    `nothing spilled, and the plan's own ${mib(own)} blocks, ${data.blocksInFlight} in flight, ` +
    `fit ${gib(budget)} of the workers' measured ${gib(store.workerCapacityBytes)}: tune's earlier pin is not needed`;
  return { field: "blockSizeMiB", from: facts.set.blockSizeMiB, to: undefined, reason };
};

/**
 * The micro-batch: unneeded when even the whole peak, scaled up to the plan's own micro-batch, fits a GPU with
 * headroom (an upper bound: only the activations grow with the micro-batch).
 */
const microBatchSize: TakeBack = (record, facts) => {
  const train = facts.train;
  if (!train || !record.gpuMemory || train.defaultMicroBatchSize <= train.microBatchSize) return undefined;
  const peak = Math.max(...record.gpuMemory.peakGiB);
  const scaled = (peak * train.defaultMicroBatchSize) / train.microBatchSize;
  if (scaled > GPU_MEMORY_HEADROOM * train.usableGiB) return undefined;
  const reason =
    `peak GPU memory ${peak.toFixed(2)} GiB, scaled to the plan's micro-batch of ${train.defaultMicroBatchSize}, ` +
    `is at most ${scaled.toFixed(2)} GiB of the ${train.usableGiB} GiB a GPU offers: tune's earlier pin is not needed`;
  return { field: "microBatchSize", from: facts.set.microBatchSize, to: undefined, reason };
};

/** One rule per field `tune` may set. */
const TAKE_BACKS: Readonly<Partial<Record<TunableField, TakeBack>>> = { blockSizeMiB, microBatchSize };

/** The changes that take back tune's own pins this run shows unneeded. */
export function takeBacks(record: RunRecord, facts: TuneFacts): Change[] {
  return facts.pinnedByTune.flatMap((field) => TAKE_BACKS[field]?.(record, facts) ?? []);
}
