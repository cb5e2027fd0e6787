/** A workload's forecast as `ray-gpu plan` prints it: wall time, GPU-hours, cost per run, utilization and bound. */
import { durationText } from "../../core/forecast/job";
import { transportText } from "../../core/forecast/scaling";
import {
  BOUND_TEXT,
  type Forecast,
  type ForecastResult,
  type ScalingPoint,
  type WorkUnit,
} from "../../core/forecast/types";

/** "$5.70", or "at most $5.70" where the nodes may be spot (the on-demand price caps it). */
export const costText = (f: Pick<Forecast, "costUsd" | "costIsUpperBound">) =>
  `${f.costIsUpperBound ? "at most " : ""}$${f.costUsd.toFixed(2)}`;

/** What the forecast's `unitSeconds` times, by the work's unit. */
const STEP_OF: { readonly [U in WorkUnit]: string } = {
  "optimizer steps": "step",
  rows: "GPU batch",
  requests: "decode step",
};

/** Seconds of one step of the work: "44.9 s", "43 ms". */
const unitText = (s: number) => (s >= 1 ? `${s.toFixed(1)} s` : `${(s * 1000).toFixed(s >= 0.01 ? 0 : 1)} ms`);

/** "TCP over ENA 1.3 s, 71%, all-reduce 62%" for one size and network of the scaling forecast. */
const pointText = (p: ScalingPoint) =>
  `${transportText(p.transport)} ${unitText(p.stepSeconds)}, ${Math.round(p.gpuUtilization * 100)}%, all-reduce ` +
  `${Math.round(p.allReduceShare * 100)}%`;

/**
 * A training job's scaling lines: per GPU count, the step over each network (time, GPU utilization, the share of the
 * step its collectives take). None when only one size could be forecast.
 */
export function scalingLines(scaling: readonly ScalingPoint[] | undefined): string[] {
  const sizes = [...new Set((scaling ?? []).map((p) => p.gpus))];
  if (sizes.length < 2) return [];
  return [
    "    scaling at the same global batch (step, GPU utilization, all-reduce share of the step):",
    ...sizes.map((gpus) => {
      const points = scaling!.filter((p) => p.gpus === gpus);
      const nodes = points[0]!.nodes;
      return `      ${gpus} GPUs (${nodes} node${nodes === 1 ? "" : "s"}): ${points.map(pointText).join("; ")}`;
    }),
  ];
}

/** The forecast's lines of a workload's block: the totals, then where they come from. */
export function forecastLines(result: ForecastResult): string[] {
  const f = result.forecast;
  if (!f) return [`  forecast: none: ${result.unavailable}`];
  return [
    `  forecast: ${durationText(f.wallSeconds)} per run (startup ${durationText(f.startupSeconds)}), ` +
      `${f.gpuHours.toFixed(2)} GPU-hours, ${costText(f)} per run, GPU utilization ${Math.round(f.gpuUtilization * 100)}%, ` +
      `bound by ${BOUND_TEXT[f.bound]}`,
    `    ${f.work.count} ${f.work.unit} (${f.work.from}); a ${STEP_OF[f.work.unit]} takes ${unitText(f.unitSeconds)}` +
      (f.waitShare > 0.005 ? `, ${Math.round(f.waitShare * 100)}% of it waiting on collectives or CPUs` : ""),
    ...scalingLines(f.scaling),
  ];
}
