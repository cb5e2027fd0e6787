/**
 * Three ways a job holds its GPUs without keeping its plan, told apart by what the GPUs draw and what the runtime
 * counts (runtime/ray_gpu/telemetry.py), each a per-job alert:
 * - hung: a GPU reports high utilization, none draws more than near-idle power, and no step has completed for
 *   {@link STALL_STEPS} planned steps. A collective waiting for a rank that never comes spins a kernel: 100%
 *   utilization, little power (NVIDIA/nccl#238, #1033; cupy/cupy#3557; nebius/soperator#796 detects a stuck
 *   collective the same way; finding the missing rank is NVIDIA/nccl#968), so the low-utilization alert never fires;
 * - starved: utilization below target while the loop waits for input longer than the target allows;
 * - idle: no GPU runs a kernel, none draws more than near-idle power, no step and no wait for input completes.
 * One moment fires at most one of them: each condition excludes the ones before it (hung, idle, starved), whatever
 * the thresholds. Pure.
 */
import { ACCELERATORS } from "../catalog/accelerators";
import { secondsText, STALL_STEPS } from "../reliability/interruption";
import type { WorkloadKind } from "../config/workloads";
import { METRICS, RECORDED, type MetricDef } from "./metrics";
import { promDuration, sel, type AlertRule } from "./promql";

/** How long utilization may stay below target before an alert fires (RayGpuJobLowUtilization, RayGpuJobStarved). */
export const LOW_UTILIZATION_FOR = "15m";
/** The A10G's power limit, W (../catalog/accelerators.ts, with its source). */
export const A10G_POWER_LIMIT_WATTS = ACCELERATORS.A10G.powerLimitWatts;
/**
 * Share of the power limit below which a GPU counts as drawing near-idle power. No idle figure for the A10G is
 * published; in pytorch/pytorch#118369 (a job that hit the NCCL watchdog's collective timeout) a GPU at 100% and one
 * at 0% drew 77 W and 70 W of an A100's 400 W, under 20%. A third leaves room above that; a healthy job that draws
 * less still advances its steps, which keeps the hung and idle alerts silent.
 */
export const NEAR_IDLE_POWER_SHARE = 1 / 3;
/** Near-idle power of an A10G, W: {@link NEAR_IDLE_POWER_SHARE} of {@link A10G_POWER_LIMIT_WATTS} (100 W). */
export const NEAR_IDLE_POWER_WATTS = Math.round(A10G_POWER_LIMIT_WATTS * NEAR_IDLE_POWER_SHARE);
/** Utilization, %, at or above which a GPU of a hung job spins: NCCL's waiting kernel shows 100%. */
export const HUNG_UTILIZATION_MIN_PERCENT = 90;
/** Utilization, %, below which a GPU runs nothing. */
export const IDLE_UTILIZATION_MAX_PERCENT = 5;
/**
 * The shortest stall window, s: a small step-time estimate must not page on a pause of a few seconds. Shorter than the
 * runtime watchdog's, so that the page comes before the watchdog fails the job.
 */
export const STALL_ALERT_FLOOR_SECONDS = 5 * 60;
/** How long a hung or idle job's GPUs must look so (utilization and power are gauges, sampled every 15 s). */
export const STALL_FOR = "5m";
/** The window of the data-wait fraction's rates. */
export const DATA_WAIT_WINDOW = "5m";

/** The runtime's counters whose ratio is the data-wait fraction: time waiting for input against time working. */
export interface DataWaitCounters {
  readonly waiting: MetricDef;
  readonly working: MetricDef;
  /** Who waits, as the starved alert says it ("the training loop waited for its next batch"). */
  readonly waiter: string;
  /** What feeds it, which the starved alert points at. */
  readonly feeder: string;
}

const TRAINING_LOOP: DataWaitCounters = {
  waiting: METRICS.inputWaitSeconds,
  working: METRICS.computeSeconds,
  waiter: "the training loop waited for its next batch",
  feeder: "the DataLoader workers",
};
const GPU_ACTORS: DataWaitCounters = {
  waiting: METRICS.actorIdleSeconds,
  working: METRICS.actorBusySeconds,
  waiter: "the GPU actors waited between calls",
  feeder: "the preprocessing pool and the read tasks",
};

/**
 * Each kind's data-wait counters: a training loop times the wait for its next batch against the loop's body
 * (StepTelemetry); a Ray Data GPU actor the gap between its calls against the calls (ActorTelemetry).
 */
export const DATA_WAIT_COUNTERS: { readonly [K in WorkloadKind]: DataWaitCounters } = {
  TrainingJob: TRAINING_LOOP,
  LoRAFineTune: TRAINING_LOOP,
  EmbeddingPipeline: GPU_ACTORS,
  BatchInference: GPU_ACTORS,
};

/** What the three states of one job need. */
export interface JobStatesInput {
  readonly workload: string;
  readonly namespace: string;
  readonly kind: WorkloadKind;
  readonly gpuUtilizationTargetPercent: number;
  /** Undefined: the kind has no step counter, and the step-based states (hung, idle) are not watched. */
  readonly plannedStepSeconds: number | undefined;
  readonly labels: Readonly<Record<string, string>>;
}

/** Seconds without a step before a job counts as stalled: {@link STALL_STEPS} planned steps, at least 5 min. */
export function stallWindowSeconds(plannedStepSeconds: number): number {
  if (!Number.isFinite(plannedStepSeconds) || plannedStepSeconds <= 0)
    throw new Error(`'plannedStepSeconds' (${plannedStepSeconds}) must be a positive number of seconds`);
  return Math.max(Math.ceil(STALL_STEPS * plannedStepSeconds), STALL_ALERT_FLOOR_SECONDS);
}

/** Data-wait fraction above which input alone keeps the GPUs below target: busy at most 1 − wait of the time. */
export const starvedDataWaitFraction = (targetPercent: number) => Number(((100 - targetPercent) / 100).toFixed(4));

const ON = "on (namespace, workload)";
const both = (conds: readonly string[]) => conds.map((c) => `(${c})`).join(` and ${ON} `);
const unless = (cond: string, excluded: readonly string[]) =>
  [cond, ...excluded].map((c) => `(${c})`).join(` unless ${ON} `);

/** PromQL over one job's series, each aggregated by (namespace, workload). */
function jobQueries(j: JobStatesInput) {
  const job = sel({ namespace: j.namespace, workload: j.workload });
  return {
    gpus: (agg: "avg" | "max", record: string) => `${agg} by (namespace, workload) (${record}${job})`,
    counter: (fn: "rate" | "increase", m: MetricDef, window: string) =>
      `sum by (namespace, workload) (${fn}(${m.name}${job}[${window}]))`,
  };
}

/** Starved: the data-wait fraction above what the target leaves, and the GPUs' average below the target. */
function starvedCondition(j: JobStatesInput): string {
  const { gpus, counter } = jobQueries(j);
  const { waiting, working } = DATA_WAIT_COUNTERS[j.kind];
  const wait = counter("rate", waiting, DATA_WAIT_WINDOW);
  const fraction = `${wait} / (${wait} + ${counter("rate", working, DATA_WAIT_WINDOW)})`;
  return both([
    `${fraction} > ${starvedDataWaitFraction(j.gpuUtilizationTargetPercent)}`,
    `${gpus("avg", RECORDED.gpuUtilization)} < ${j.gpuUtilizationTargetPercent}`,
  ]);
}

/** Hung and idle: no step for the stall window and no GPU above near-idle power; spinning GPUs, or none busy. */
function stallConditions(j: JobStatesInput, stallSeconds: number) {
  const { gpus, counter } = jobQueries(j);
  const stall = promDuration(stallSeconds);
  const stalled = `${counter("increase", METRICS.steps, stall)} == 0`;
  const nearIdlePower = `${gpus("max", RECORDED.gpuPowerUsage)} < ${NEAR_IDLE_POWER_WATTS}`;
  const maxUtilization = gpus("max", RECORDED.gpuUtilization);
  const waitedForInput = `${counter("increase", DATA_WAIT_COUNTERS[j.kind].waiting, stall)} > 0`;
  return {
    hung: both([`${maxUtilization} >= ${HUNG_UTILIZATION_MIN_PERCENT}`, nearIdlePower, stalled]),
    idle: unless(both([`${maxUtilization} < ${IDLE_UTILIZATION_MAX_PERCENT}`, nearIdlePower, stalled]), [
      waitedForInput,
    ]),
  };
}

/** The hung alert: spinning GPUs at near-idle power, no step for the stall window. */
function hungAlert(
  j: JobStatesInput,
  expr: string,
  window: { readonly seconds: number; readonly stepSeconds: number },
): AlertRule {
  const stall = promDuration(window.seconds);
  return {
    alert: "RayGpuJobHung",
    expr,
    for: STALL_FOR,
    labels: j.labels,
    annotations: {
      summary: `${j.workload}: hung, its GPUs busy at near-idle power and no step for ${stall}`,
      description:
        `A GPU of the job reports {{ $value | printf "%.0f" }}% utilization, yet none draws ` +
        `${NEAR_IDLE_POWER_WATTS} W or more (a third of the A10G's ${A10G_POWER_LIMIT_WATTS} W limit) and no ` +
        `worker has completed a step for ${stall} (${STALL_STEPS} planned steps of ${secondsText(window.stepSeconds)} s, ` +
        `at least ${promDuration(STALL_ALERT_FLOOR_SECONDS)}). A collective waiting for a rank that never comes ` +
        "looks like this: NCCL spins a kernel. Find the rank that stopped in the workers' logs (an exception, a " +
        "data-loader deadlock, a lost node); the runtime's watchdog fails a job whose steps stopped.",
    },
  };
}

/** The starved alert: below target while the loop waits for input longer than the target allows. */
function starvedAlert(j: JobStatesInput, expr: string): AlertRule {
  const target = j.gpuUtilizationTargetPercent;
  const { waiting, waiter, feeder } = DATA_WAIT_COUNTERS[j.kind];
  return {
    alert: "RayGpuJobStarved",
    expr,
    for: LOW_UTILIZATION_FOR,
    labels: j.labels,
    annotations: {
      summary: `${j.workload}: starved, below its ${target}% GPU utilization target while waiting for input`,
      description:
        `For ${LOW_UTILIZATION_FOR} the job's GPUs averaged below ${target}% while ${waiter} ` +
        `{{ $value | humanizePercentage }} of the time (${waiting.name}, over ${DATA_WAIT_WINDOW}): more than the ` +
        `${Number((100 - target).toFixed(2))}% a ${target}% target leaves, so the input, not the GPU, sets the ` +
        `pace. Compare ${feeder} with \`ray-gpu plan\`, and the data source's read throughput.`,
    },
  };
}

/** The idle alert: the job holds GPUs that run nothing, with no step and no wait for input completing. */
function idleAlert(j: JobStatesInput, expr: string, stallSeconds: number): AlertRule {
  const stall = promDuration(stallSeconds);
  return {
    alert: "RayGpuJobIdle",
    expr,
    for: STALL_FOR,
    labels: j.labels,
    annotations: {
      summary: `${j.workload}: idle, its GPUs run nothing and no step for ${stall}`,
      description:
        `The job's pods hold GPUs at most {{ $value | printf "%.0f" }}% busy and below ${NEAR_IDLE_POWER_WATTS} W, ` +
        `and for ${stall} no worker completed a step or a wait for its next batch (a wait counts when it ends: a ` +
        "loader that never returns shows here). Look for a checkpoint or an upload that does not end, a lock, or a " +
        "loop that finished without the job exiting.",
    },
  };
}

/**
 * The job's state alerts, each excluding those before it (hung, idle, starved). Hung and idle need a planned step time:
 * without one (a kind with no step counter) only starved is watched.
 */
export function jobStateAlerts(j: JobStatesInput): AlertRule[] {
  const starved = starvedCondition(j);
  if (j.plannedStepSeconds === undefined) return [starvedAlert(j, starved)];
  const stallSeconds = stallWindowSeconds(j.plannedStepSeconds);
  const { hung, idle } = stallConditions(j, stallSeconds);
  return [
    hungAlert(j, hung, { seconds: stallSeconds, stepSeconds: j.plannedStepSeconds }),
    idleAlert(j, unless(idle, [hung]), stallSeconds),
    starvedAlert(j, unless(starved, [hung, idle])),
  ];
}
