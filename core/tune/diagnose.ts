/**
 * `ray-gpu tune`'s diagnosis: which stage bounds a measured run, with the numbers that show it, and the workload
 * settings that would lift it. Pure: a run record and the plan's facts in, a diagnosis out. One rule per stage
 * (`STAGE_RULES`), tried in `STAGE_ORDER`: spilling and GPU memory first, then the pipeline's bottleneck, the Ray Data
 * stage whose tasks or actors are busiest per slot, named only when its share shows it bound the run
 * (`BOUND_SHARE`, `occupancy.ts`). A run no rule finds bound is healthy: it changes nothing, except that it takes back
 * `tune`'s own earlier pins it shows unneeded (`take-back.ts`).
 */
import { MIB } from "../quantity";
import type { DataStage, RunRecord } from "./run-record";
import {
  BOUND_SHARE,
  DATA_WAIT_BOUND,
  GPU_MEMORY_HEADROOM,
  GPU_WAITING,
  SHORT_RUN_SECONDS,
  STAGES,
  type Diagnosis,
  type Stage,
  type TuneFacts,
} from "./model";
import { bottleneck, busyLine, occupancy, unboundEvidence } from "./occupancy";
import { gib, mib, pct } from "./words";
import { takeBacks } from "./take-back";

type Finding = Omit<Diagnosis, "healthy" | "stage"> & { readonly stage: Stage; readonly healthy?: boolean };
type Rule = (record: RunRecord, facts: TuneFacts) => Finding | undefined;

const objectStore: Rule = (record, facts) => {
  const store = record.objectStore;
  const data = facts.data;
  if (!store || store.spilledBytes === 0 || !data) return undefined;
  const largest = Math.max(0, ...(record.data?.operators.map((o) => o.maxBlockBytes) ?? []));
  const fitBytes = (store.workerCapacityBytes * data.workingSetShare) / data.blocksInFlight;
  const fitMiB = Math.max(1, Math.floor(fitBytes / MIB));
  const evidence = [
    `${gib(store.spilledBytes)} spilled to disk; blocks up to ${mib(largest)} (planned ${mib(data.planned.blockSizeBytes)})`,
    `the workers' object stores hold ${gib(store.workerCapacityBytes)} (${gib(store.capacityBytes)} with the head's; ` +
      `the plan counted ${gib(data.plannedStoreBytes)} on its workers)`,
  ];
  if (fitMiB * MIB >= data.planned.blockSizeBytes)
    return {
      stage: "objectStore",
      evidence,
      changes: [],
      note: "blocks are already no larger than the workers' measured stores fit: give the workers more memory (a larger g5 size)",
    };
  const reason =
    `${data.blocksInFlight} blocks in flight x ${fitMiB} MiB fit ${pct(data.workingSetShare)} of the workers' ` +
    `measured ${gib(store.workerCapacityBytes)}: nothing spills`;
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

/** The bound stage's line, with the share that shows it bound. */
const boundLine = (record: RunRecord, stage: DataStage) =>
  `${busyLine(record, stage)!} (a stage binds at ${pct(BOUND_SHARE)})`;

/** A CPU stage that keeps the GPU actors waiting: the bound stage, while they are busy less than GPU_WAITING. */
function starving(record: RunRecord, stage: DataStage): string[] | undefined {
  const gpu = occupancy(record).gpu;
  if (!gpu || bottleneck(record) !== stage || gpu.share >= GPU_WAITING) return undefined;
  return [boundLine(record, stage), busyLine(record, "gpu")!];
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
  const evidence = [boundLine(record, "gpu")];
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

/** A run no rule found bound: what shows it, and tune's own pins it shows unneeded. */
function healthy(record: RunRecord, facts: TuneFacts): Diagnosis {
  const changes = takeBacks(record, facts);
  if (record.data)
    return { stage: "none", healthy: true, evidence: unboundEvidence(record, SHORT_RUN_SECONDS), changes };
  const evidence = record.train
    ? [`the training loop waits for data ${pct(record.train.dataWaitFraction)} of its time`]
    : ["nothing spilled, and no Ray Data stage was measured"];
  return { stage: "none", healthy: true, evidence, changes };
}

/**
 * The bound of a run and what to change; a run that no rule finds bound is healthy as it stands, and takes back
 * tune's own earlier pins it shows unneeded. A pinned setting that binds the run is undone first, whatever else the
 * run shows: the plan would not have chosen it, and a stage it starves queues blocks before it that can make the
 * store spill (shown as "also", for the next run's record).
 */
export function diagnose(record: RunRecord, facts: TuneFacts): Diagnosis {
  const findings = STAGE_ORDER.flatMap((stage) => STAGE_RULES[stage](record, facts) ?? []);
  const found = findings.find(unpins) ?? findings[0];
  if (!found) return healthy(record, facts);
  const also = findings.filter((f) => f !== found && f.stage === "objectStore").map((f) => `also: ${f.evidence[0]}`);
  const evidence = [...found.evidence, ...also];
  if (found.healthy) return { ...found, healthy: true, evidence, changes: takeBacks(record, facts) };
  return { ...found, evidence, healthy: false };
}
