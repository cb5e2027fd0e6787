/**
 * `ray-gpu tune`'s diagnosis: which stage bounds a measured run, with the numbers that show it, and the workload
 * settings that would lift it. Pure: a run record and the plan's facts in, a diagnosis out. One rule per stage
 * (`STAGE_RULES`), tried in `STAGE_ORDER`: spilling and GPU memory first, then the pipeline's bottleneck, the Ray Data
 * stage whose tasks or actors are busiest per slot (a share of the run, so the same stage is named on a quiet and on
 * a loaded machine, where every stage slows alike). A run bound by its GPU stage at the plan's own settings is
 * healthy and changes nothing.
 */
import { GIB, MIB } from "../quantity";
import type { DataStage, RunRecord } from "./run-record";

/** Stages a diagnosis can name. */
export const STAGES = ["objectStore", "gpuMemory", "preprocess", "read", "dataLoader", "gpu"] as const;
/** A stage of a run. */
export type Stage = (typeof STAGES)[number];

/** The GPU stage waits on the bottleneck when its actors are busy less than this share of the run. */
export const GPU_WAITING = 0.7;
/** A training loop is bound by its input when it waits this share of its time or more. */
export const DATA_WAIT_BOUND = 0.1;
/** Peak GPU memory above this share of what a GPU offers leaves no headroom (fragmentation, a longer batch). */
export const GPU_MEMORY_HEADROOM = 0.97;

/** Workload fields `tune` may change, each a key of a `ray-gpu:workloads` entry. */
export type TunableField = "preprocessConcurrency" | "batchSize" | "blockSizeMiB" | "microBatchSize";

/** The Ray Data facts of a plan that a diagnosis reads. */
export interface DataFacts {
  /** What the plan applied. */
  readonly planned: {
    readonly actorPoolSize: number;
    readonly preprocessConcurrency: number;
    readonly batchSize: number;
    readonly blockSizeBytes: number;
  };
  /** What the plan would pick were the workload to set nothing. */
  readonly defaults: {
    readonly preprocessConcurrency: number;
    readonly batchSize: number;
  };
  /** Blocks the plan counts in flight (input and output of every task and actor slot). */
  readonly blocksInFlight: number;
  /** Share of the object store the in-flight blocks may fill (Ray Data's share x the plan's target). */
  readonly workingSetShare: number;
  /** Object-store memory of the planned workers together. */
  readonly plannedStoreBytes: number;
}

/** The training facts of a plan that a diagnosis reads. */
export interface TrainFacts {
  readonly microBatchSize: number;
  readonly usableGiB: number;
}

/** What a diagnosis knows of the plan the run came from. */
export interface TuneFacts {
  readonly workload: string;
  /** The workload's own settings of the tunable fields (absent: the plan decides). */
  readonly set: Readonly<Partial<Record<TunableField, number>>>;
  readonly data?: DataFacts;
  readonly train?: TrainFacts;
}

/** One change to the workload entry: `to` undefined removes the setting, so the plan decides again. */
export interface Change {
  readonly field: TunableField;
  readonly from: number | undefined;
  readonly to: number | undefined;
  readonly reason: string;
}

/** Which stage bounds the run, why, and what to change (nothing when healthy or when no setting helps). */
export interface Diagnosis {
  readonly stage: Stage;
  readonly healthy: boolean;
  readonly evidence: readonly string[];
  readonly changes: readonly Change[];
  /** Why no change is proposed, when the run is not healthy. */
  readonly note?: string;
}

type Finding = Omit<Diagnosis, "healthy"> & { readonly healthy?: boolean };
type Rule = (record: RunRecord, facts: TuneFacts) => Finding | undefined;

const pct = (x: number) => `${Math.round(x * 100)}%`;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;
const gib = (bytes: number) => `${(bytes / GIB).toFixed(2)} GiB`;

/** Each Ray Data stage's busiest operator: its share of the run busy, per slot. */
export function occupancy(
  record: RunRecord,
): Partial<Record<DataStage, { share: number; operator: string; slots: number }>> {
  const data = record.data;
  if (!data) return {};
  const out: Partial<Record<DataStage, { share: number; operator: string; slots: number }>> = {};
  for (const op of data.operators) {
    const share = Math.min(1, op.busySeconds / (op.slots * data.wallSeconds));
    if (share >= (out[op.stage]?.share ?? -1)) out[op.stage] = { share, operator: op.name, slots: op.slots };
  }
  return out;
}

/** "MapBatches(Tokenize): 1 slot busy 97% of the run" */
function busyLine(record: RunRecord, stage: DataStage): string | undefined {
  const o = occupancy(record)[stage];
  if (!o) return undefined;
  return `${o.operator}: ${o.slots} ${o.slots === 1 ? "slot" : "slots"} busy ${pct(o.share)} of the ${record.data!.wallSeconds.toFixed(1)} s run`;
}

const objectStore: Rule = (record, facts) => {
  const store = record.objectStore;
  const data = facts.data;
  if (!store || store.spilledBytes === 0 || !data) return undefined;
  const largest = Math.max(0, ...(record.data?.operators.map((o) => o.maxBlockBytes) ?? []));
  const fitBytes = (store.capacityBytes * data.workingSetShare) / data.blocksInFlight;
  const fitMiB = Math.max(1, Math.floor(fitBytes / MIB));
  const evidence = [
    `${gib(store.spilledBytes)} spilled to disk; blocks up to ${mib(largest)} (planned ${mib(data.planned.blockSizeBytes)})`,
    `the cluster's object stores hold ${gib(store.capacityBytes)} (the plan counted ${gib(data.plannedStoreBytes)} on its workers)`,
  ];
  if (fitMiB * MIB >= data.planned.blockSizeBytes)
    return {
      stage: "objectStore",
      evidence,
      changes: [],
      note: "blocks are already no larger than the measured store fits: give the workers more memory (a larger g5 size)",
    };
  const reason =
    `${data.blocksInFlight} blocks in flight x ${fitMiB} MiB fit ${pct(data.workingSetShare)} of the measured ` +
    `${gib(store.capacityBytes)} store: nothing spills`;
  return {
    stage: "objectStore",
    evidence,
    changes: [{ field: "blockSizeMiB", from: facts.set.blockSizeMiB, to: fitMiB, reason }],
  };
};

const gpuMemory: Rule = (record, facts) => {
  const train = facts.train;
  if (!record.gpuMemory || !train) return undefined;
  const peak = Math.max(...record.gpuMemory.peakGiB);
  if (peak <= GPU_MEMORY_HEADROOM * train.usableGiB) return undefined;
  const evidence = [`peak GPU memory ${peak.toFixed(2)} GiB of the ${train.usableGiB} GiB a GPU offers`];
  if (train.microBatchSize <= 1)
    return { stage: "gpuMemory", evidence, changes: [], note: "the micro-batch is already 1: use more GPUs or ZeRO-3" };
  const to = Math.floor(train.microBatchSize / 2);
  const reason = `half the activations; gradient accumulation keeps the global batch`;
  return {
    stage: "gpuMemory",
    evidence,
    changes: [{ field: "microBatchSize", from: facts.set.microBatchSize, to, reason }],
  };
};

/** The Ray Data stage (read, preprocess, gpu) whose slots are busiest: the pipeline's bottleneck. */
export function bottleneck(record: RunRecord): DataStage | undefined {
  const o = occupancy(record);
  const stages = (["read", "preprocess", "gpu"] as const).filter((s) => o[s] !== undefined);
  return stages.reduce<DataStage | undefined>(
    (best, s) => (best && o[best]!.share >= o[s]!.share ? best : s),
    undefined,
  );
}

/** A CPU stage that keeps the GPU actors waiting: the bottleneck, while they are busy less than GPU_WAITING. */
function starving(record: RunRecord, stage: DataStage): string[] | undefined {
  const gpu = occupancy(record).gpu;
  if (!gpu || bottleneck(record) !== stage || gpu.share >= GPU_WAITING) return undefined;
  return [busyLine(record, stage)!, busyLine(record, "gpu")!];
}

const preprocess: Rule = (record, facts) => {
  const evidence = starving(record, "preprocess");
  const data = facts.data;
  if (!evidence || !data) return undefined;
  const { preprocessConcurrency: now } = data.planned;
  const most = data.defaults.preprocessConcurrency;
  if (now >= most)
    return {
      stage: "preprocess",
      evidence,
      changes: [],
      note: "every CPU left beside the GPU actors already preprocesses: a g5 size with more CPUs per GPU, or a cheaper tokenizer",
    };
  const reason = `the plan's ${most} tasks: every worker CPU beside the GPU actors reads and tokenizes`;
  return {
    stage: "preprocess",
    evidence,
    changes: [{ field: "preprocessConcurrency", from: facts.set.preprocessConcurrency, to: undefined, reason }],
  };
};

const read: Rule = (record) => {
  const evidence = starving(record, "read");
  if (!evidence) return undefined;
  return {
    stage: "read",
    evidence,
    changes: [],
    note: "no workload setting reads faster: more, smaller input files (Ray Data reads a file per task)",
  };
};

const dataLoader: Rule = (record) => {
  const train = record.train;
  if (!train || train.dataWaitFraction < DATA_WAIT_BOUND) return undefined;
  const evidence = [
    `the training loop waits for its next batch ${pct(train.dataWaitFraction)} of its time (the slowest of ${train.workers} workers)`,
  ];
  return {
    stage: "dataLoader",
    evidence,
    changes: [],
    note: "the plan already gives the DataLoader every CPU beside the GPU's: pre-tokenize the dataset, or a g5 size with more CPUs per GPU",
  };
};

const gpu: Rule = (record, facts) => {
  const data = facts.data;
  if (!data || bottleneck(record) !== "gpu") return undefined;
  const evidence = [busyLine(record, "gpu")!];
  const set = facts.set.batchSize;
  if (set === undefined || set >= data.defaults.batchSize)
    return { stage: "gpu", healthy: true, evidence, changes: [] };
  const reason = `the largest batch that fits the GPU (the plan's): fewer, fuller calls per row`;
  evidence.push(`each call embeds ${set} rows; the GPU's memory fits ${data.defaults.batchSize}`);
  return { stage: "gpu", evidence, changes: [{ field: "batchSize", from: set, to: undefined, reason }] };
};

/** One rule per stage; `STAGE_ORDER` says which is tried first. */
export const STAGE_RULES: Readonly<Record<Stage, Rule>> = { objectStore, gpuMemory, preprocess, read, dataLoader, gpu };
/** Correctness first (spilling, memory), then the stages that starve the GPUs, then the GPUs themselves; a finding
 * that undoes a pinned setting goes before all of them (`diagnose`). */
export const STAGE_ORDER: readonly Stage[] = STAGES;

/** Whether a finding takes out a setting the workload pinned, so the plan decides it again. */
const unpins = (f: Finding) => f.changes.some((c) => c.from !== undefined && c.to === undefined);

/**
 * The bound of a run and what to change; a run that no rule finds bound is healthy as it stands. A pinned setting
 * that binds the run is undone first, whatever else the run shows: the plan would not have chosen it, and a stage it
 * starves queues blocks before it that can make the store spill (shown as "also", for the next run's record).
 */
export function diagnose(record: RunRecord, facts: TuneFacts): Diagnosis {
  const findings = STAGE_ORDER.flatMap((stage) => STAGE_RULES[stage](record, facts) ?? []);
  const found = findings.find(unpins) ?? findings[0];
  if (found) {
    const also = findings.filter((f) => f !== found && f.stage === "objectStore").map((f) => `also: ${f.evidence[0]}`);
    return { ...found, evidence: [...found.evidence, ...also], healthy: found.healthy ?? false };
  }
  const evidence = record.train
    ? [`the training loop waits for data ${pct(record.train.dataWaitFraction)} of its time`]
    : ["nothing spilled, and no Ray Data stage was measured"];
  return { stage: "gpu", healthy: true, evidence, changes: [] };
}
