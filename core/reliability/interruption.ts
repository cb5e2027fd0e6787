/**
 * What an interruption costs a training job, and the checkpoint cadence that keeps it small. Pure.
 *
 * How a spot interruption reaches a Ray worker on EKS (sources in docs/reliability.md#interruptions):
 * - EC2 sends a rebalance recommendation (sometimes) and then the two-minute interruption notice; the instance is
 *   reclaimed two minutes after the notice ("Spot Instance interruption notices", EC2 User Guide).
 * - A managed node group with capacity type SPOT has capacity rebalancing on: on the recommendation EKS launches a
 *   replacement and then cordons and drains the old node; on the notice it drains at once ("Managed node group
 *   capacity types", EKS User Guide). Draining evicts each pod: the kubelet runs the container's preStop hook, then
 *   sends SIGTERM, then SIGKILL when `terminationGracePeriodSeconds` (counted from the start of preStop) ends.
 * - Our preStop hook on spot workers writes the notice for the job's workers; the runtime asks Ray Core to drain its
 *   node for preemption (`ray drain-node`, reason DRAIN_NODE_REASON_PREEMPTION, with the deadline); Ray Train's
 *   preemption watcher (Ray 2.58, polling every 5 s) tells every worker (`ray.train.get_preemption_info()`); the
 *   training loop finishes its step, checkpoints it with its data position, and the hook then stops Ray on the node.
 *
 * The step time is the forecast's (../forecast/training.ts, calibrated against published runs in docs/forecast.md);
 * the runtime's telemetry reports the real one.
 */

/** EC2's warning before it reclaims a spot instance. */
export const SPOT_NOTICE_SECONDS = 120;
/** Grace of a worker pod on spot: the whole notice (the instance is gone after it, so more buys nothing). */
export const SPOT_WORKER_GRACE_SECONDS = SPOT_NOTICE_SECONDS;
/**
 * From the notice to the loop seeing it: the runtime's notice watcher (1 s) and Ray Train's preemption watcher
 * (`DEFAULT_PREEMPTION_POLL_INTERVAL_S` = 5 s, ray/train/v2/_internal/constants.py, Ray 2.58).
 */
export const NOTICE_DELIVERY_SECONDS = 6;
/** Left at the end of the grace period for `ray stop` and the kubelet. */
export const STOP_MARGIN_SECONDS = 15;
/** Share of a node's baseline network a checkpoint upload to S3 gets. */
export const CHECKPOINT_NETWORK_SHARE = 0.5;
/** At most this share of the run may go to writing periodic checkpoints. */
export const MAX_CHECKPOINT_OVERHEAD = 0.05;
/** Work an interruption without notice may lose, by capacity: spot is interrupted often, on-demand rarely. */
export const LOST_WORK_TARGET_MINUTES = { spot: 10, onDemand: 30 } as const;
/**
 * Planned steps without one completing before a job counts as stalled, for the watchdog and the hung and idle alerts:
 * room for steps slower than planned (an evaluation, a checkpoint, the first steps' compilation).
 */
export const STALL_STEPS = 10;
/**
 * Floor of the stall window: a restart after an interruption (the notice, a new GPU node within Kueue's 15-minute
 * pods-ready window, the image) shows no step either.
 */
export const STALL_FLOOR_SECONDS = 20 * 60;

/** What the bound is computed from: the step time, the checkpoint, the cluster and the capacity. */
export interface InterruptionInput {
  /** Seconds of one optimizer step: the forecast's step model (../forecast/training.ts). */
  readonly stepSeconds: number;
  /** What a checkpoint writes: trainable weights and their optimizer states. */
  readonly checkpointBytes: number;
  readonly gpus: number;
  /** Nodes that write their share of a checkpoint at once: all of them under ZeRO, one (rank 0) under DDP. */
  readonly writerNodes: number;
  readonly networkBaselineMbps: number;
  readonly spot: boolean;
}

/** The checkpoint cadence and what an interruption costs with it. */
export interface InterruptionPlan {
  readonly stepSeconds: number;
  readonly checkpointWriteSeconds: number;
  readonly checkpointEverySteps: number;
  readonly whyCadence: string;
  /** Whether finishing the step in flight and checkpointing it fits in the notice (spot only). */
  readonly noticeCheckpointFits: boolean;
  /** Work an interruption loses: with the notice checkpoint (spot, when it fits), and without notice. */
  readonly lostWithNotice: LostWork | undefined;
  readonly lostWithoutNotice: LostWork;
  readonly stallAfterSeconds: number;
}

/** Lost work, in optimizer steps and GPU-minutes. */
export interface LostWork {
  readonly steps: number;
  readonly gpuMinutes: number;
}

/** Seconds to upload one checkpoint, the nodes writing their shares in parallel. */
export const checkpointWriteSeconds = (i: InterruptionInput) =>
  i.checkpointBytes / i.writerNodes / ((i.networkBaselineMbps * 1e6 * CHECKPOINT_NETWORK_SHARE) / 8);

const lost = (steps: number, stepSeconds: number, gpus: number): LostWork => ({
  steps,
  gpuMinutes: Math.round(((steps * stepSeconds * gpus) / 60) * 10) / 10,
});

/** The smallest time one decimal shows as 0.1 rather than 0.0. */
const TENTH_ROUNDS_UP = 0.05;

/**
 * Seconds as reasons and alerts print them: one decimal below 10, whole from 10 (9.96 s is "10", not "10.0"); `<0.1`
 * for a time one decimal would show as 0.0 (a small adapter's checkpoint takes milliseconds to write). After "about",
 * use {@link aboutSeconds}.
 */
export const secondsText = (s: number) =>
  s < TENTH_ROUNDS_UP ? "<0.1" : s < 9.95 ? s.toFixed(1) : String(Math.round(s));

/** "about 5.9 s", or "under 0.1 s" for a time one decimal would show as 0.0. */
export const aboutSeconds = (s: number) => (s < TENTH_ROUNDS_UP ? "under 0.1 s" : `about ${secondsText(s)} s`);

/** GPU-minutes of lost work as the reasons print them: "under 0.1" for work that rounds to 0 (a step is seconds). */
const gpuMinutesText = (m: LostWork) => (m.gpuMinutes === 0 && m.steps > 0 ? "under 0.1" : String(m.gpuMinutes));

/** Steps between checkpoints: within the capacity's lost-work target unless writing that often costs too much. */
function cadence(i: InterruptionInput, stepSeconds: number, writeSeconds: number) {
  const targetMinutes = i.spot ? LOST_WORK_TARGET_MINUTES.spot : LOST_WORK_TARGET_MINUTES.onDemand;
  const cheapest = writeSeconds / MAX_CHECKPOINT_OVERHEAD;
  const capacity = i.spot ? "spot" : "on-demand";
  if (cheapest > targetMinutes * 60) {
    const steps = Math.max(1, Math.ceil(cheapest / stepSeconds));
    const why =
      `a checkpoint takes ${aboutSeconds(writeSeconds)} to write; more often than every ${steps} steps ` +
      `would spend over ${MAX_CHECKPOINT_OVERHEAD * 100}% of the run writing (above the ${targetMinutes}-minute ` +
      `${capacity} target)`;
    return { steps, why };
  }
  const steps = Math.max(1, Math.floor((targetMinutes * 60) / stepSeconds));
  const why =
    `keeps the work an interruption without notice loses within ${targetMinutes} minutes on ${capacity} ` +
    `(a step is ${aboutSeconds(stepSeconds)}, a checkpoint ${aboutSeconds(writeSeconds)} to write)`;
  return { steps, why };
}

/** The cadence, the lost work with and without the notice, and the stall window. */
export function planInterruptions(i: InterruptionInput): InterruptionPlan {
  const stepSeconds = i.stepSeconds;
  const writeSeconds = checkpointWriteSeconds(i);
  const every = cadence(i, stepSeconds, writeSeconds);
  const noticeNeeds = NOTICE_DELIVERY_SECONDS + stepSeconds + writeSeconds + STOP_MARGIN_SECONDS;
  const noticeCheckpointFits = i.spot && noticeNeeds <= SPOT_WORKER_GRACE_SECONDS;
  return {
    stepSeconds,
    checkpointWriteSeconds: writeSeconds,
    checkpointEverySteps: every.steps,
    whyCadence: every.why,
    noticeCheckpointFits,
    lostWithNotice: noticeCheckpointFits ? lost(1, stepSeconds, i.gpus) : undefined,
    lostWithoutNotice: lost(every.steps, stepSeconds, i.gpus),
    stallAfterSeconds: Math.ceil(Math.max(STALL_STEPS * stepSeconds, 2 * writeSeconds, STALL_FLOOR_SECONDS)),
  };
}

/** The bound as `ray-gpu plan` prints it. */
export function lostWorkText(p: InterruptionPlan, spot: boolean): string {
  const without = `${p.lostWithoutNotice.steps} steps (${gpuMinutesText(p.lostWithoutNotice)} GPU-min)`;
  if (!spot) return `an interruption loses at most ${without}, the checkpoint cadence`;
  if (p.lostWithNotice)
    return (
      `a spot interruption loses at most the step in flight, ${gpuMinutesText(p.lostWithNotice)} GPU-min: the notice ` +
      `checkpoint fits in the ${SPOT_WORKER_GRACE_SECONDS} s grace; without notice at most ${without}`
    );
  return (
    `the step in flight and its checkpoint (${aboutSeconds(p.stepSeconds + p.checkpointWriteSeconds)}) do not ` +
    `fit in the ${SPOT_WORKER_GRACE_SECONDS} s notice: an interruption loses at most ${without}`
  );
}
