/**
 * The words `ray-gpu tune`'s diagnosis is written in: the stages a run can be bound by, the plan's facts it reads,
 * the changes it proposes and the thresholds that decide. Types and constants only; the rules are in `diagnose.ts`,
 * the shares they read in `occupancy.ts`, and the taking back of tune's own pins in `take-back.ts`.
 */

/** Stages a diagnosis can name as the run's bound. */
export const STAGES = ["objectStore", "gpuMemory", "preprocess", "read", "dataLoader", "gpu"] as const;
/** A stage of a run. */
export type Stage = (typeof STAGES)[number];

/**
 * A Ray Data stage binds the run when its slots were busy at least this share of the run. A bound stage's slots work
 * through the steady state, waiting only at start-up and at the end; below half, the stage spent more of the run
 * waiting than working, so it did not set the pace. Measured on the recorded runs of test/data/run-records: the
 * stages the bad settings bind were busy 67% (a pool of one tokenizing task; 4-row encoder calls), while the busiest
 * stage of the runs as planned was busy 21% and 45%.
 */
export const BOUND_SHARE = 0.5;
/** The GPU stage waits on the bottleneck when its actors are busy less than this share of the run. */
export const GPU_WAITING = 0.7;
/** A training loop is bound by its input when it waits this share of its time or more. */
export const DATA_WAIT_BOUND = 0.1;
/** Peak GPU memory above this share of what a GPU offers leaves no headroom (fragmentation, a longer batch). */
export const GPU_MEMORY_HEADROOM = 0.97;
/**
 * A run shorter than this is mostly start-up (a pool's actors load their model, the first blocks are read), so no
 * stage's share shows its steady state: a healthy verdict on it says to tune a longer run.
 */
export const SHORT_RUN_SECONDS = 120;

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
    readonly blockSizeBytes: number;
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
  /** The micro-batch the plan would pick were the workload to set none. */
  readonly defaultMicroBatchSize: number;
  readonly usableGiB: number;
}

/** What a diagnosis knows of the plan the run came from. */
export interface TuneFacts {
  readonly workload: string;
  /** The workload's own settings of the tunable fields (absent: the plan decides). */
  readonly set: Readonly<Partial<Record<TunableField, number>>>;
  /** The settings `tune --write` pinned from an earlier run (their line carries `TUNE_PIN_MARK`). */
  readonly pinnedByTune: readonly TunableField[];
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

/**
 * Which stage bounds the run, why, and what to change. `stage` is `none` when no stage was busy enough to bind the
 * run; a healthy run may still take back tune's own earlier pins (its `changes`).
 */
export interface Diagnosis {
  readonly stage: Stage | "none";
  readonly healthy: boolean;
  readonly evidence: readonly string[];
  readonly changes: readonly Change[];
  /** Why no change is proposed, when the run is not healthy. */
  readonly note?: string;
}

/** The comment `tune --write` leaves on a line it sets, so a later run may take that pin back. */
export const TUNE_PIN_MARK = "set by ray-gpu tune";
