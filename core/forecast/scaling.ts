/**
 * The scaling forecast of a data-parallel training job: its optimizer step at 8, 16 and 32 GPUs (and its own count),
 * over TCP and, where the pool's sizes have it, over EFA, at the job's global batch. What a reviewer reads to choose a
 * job's size and network: how much of a step the collectives take, and how much of that the GPUs wait for. Pure.
 */
import { round3 } from "../quantity";
import { NETWORK_EFFICIENCY } from "./calibration";
import { linksOf } from "./job";
import { trainingStep, type TrainingStepInput } from "./training";
import { TRANSPORTS, type ScalingPoint, type Transport } from "./types";

/** GPU counts every scaling forecast shows, beside the job's own. */
export const SCALING_GPUS = [8, 16, 32] as const;

/** What the scaling forecast varies: the step's input at the job's size, its global batch and its node's network. */
export interface ScalingInput {
  readonly step: TrainingStepInput;
  readonly globalBatchSize: number;
  readonly networkBaselineMbps: number;
  /** Whether every size of the job's pool has an EFA interface. */
  readonly efaCapable: boolean;
}

/** The sizes to forecast: 8, 16 and 32 GPUs and the job's own, whole nodes whose micro-batches make the batch. */
function scalingSizes(i: ScalingInput): number[] {
  const { step } = i;
  const sizes = [...new Set([...SCALING_GPUS, step.gpus])].sort((a, b) => a - b);
  return sizes.filter(
    (g) => g % step.gpusPerNode === 0 && i.globalBatchSize % (step.microBatchSize * g) === 0 && g <= i.globalBatchSize,
  );
}

/** The job's step at `gpus` over `transport`, at the same global batch and micro-batch. */
function pointAt(i: ScalingInput, gpus: number, transport: Transport): ScalingPoint {
  const gradientAccumulation = i.globalBatchSize / (i.step.microBatchSize * gpus);
  const s = trainingStep({
    ...i.step,
    gpus,
    gradientAccumulation,
    links: linksOf(i.networkBaselineMbps, transport),
  });
  const stepSeconds = s.busySeconds + s.waitSeconds;
  return {
    gpus,
    nodes: gpus / i.step.gpusPerNode,
    transport,
    gradientAccumulation,
    stepSeconds: round3(stepSeconds),
    gpuUtilization: round3(s.busySeconds / stepSeconds),
    allReduceShare: round3(Math.min(1, s.communicationSeconds / stepSeconds)),
    samplesPerSecond: round3(i.globalBatchSize / stepSeconds),
  };
}

/**
 * The job's step at each size over each transport its pool offers (EFA only on pools whose every size has it; one
 * node's collectives stay on its PCIe, so a one-node size is shown once, as TCP).
 */
export function scalingForecast(i: ScalingInput): ScalingPoint[] {
  const transports = TRANSPORTS.filter((t) => t === "tcp" || i.efaCapable);
  return scalingSizes(i).flatMap((gpus) =>
    (gpus > i.step.gpusPerNode ? transports : (["tcp"] as const)).map((t) => pointAt(i, gpus, t)),
  );
}

/** "TCP over ENA" or "EFA". */
export const transportText = (t: Transport) => NETWORK_EFFICIENCY[t].text;
