/**
 * A job's forecast re-calibrated from a run: the plan forecast one run's time from its modelled throughput; the run
 * record measured the real one (training samples a second, or the rows a Ray Data pipeline wrote over its wall time).
 * The same work at the measured pace gives the run's time and cost as this job really runs. Pure.
 */
import type { Forecast } from "../forecast/types";
import { round2, round3 } from "../quantity";
import type { RunRecord } from "./run-record";

/** One run's time and cost. */
export interface RunFigures {
  readonly wallSeconds: number;
  readonly costUsd: number;
}

/** The plan's forecast beside the same work at the run's measured pace. */
export interface Recalibration {
  readonly unit: "samples/s" | "rows/s";
  /** Throughput the forecast assumed, and what the run measured. */
  readonly planned: number;
  readonly measured: number;
  /** Measured over planned: above 1, the job runs faster than forecast. */
  readonly ratio: number;
  readonly forecast: RunFigures;
  readonly recalibrated: RunFigures;
}

/** The run's pace and the forecast's, in the same unit, with the work of one run in it. */
function paces(record: RunRecord, f: Forecast, samplesPerStep: number | undefined) {
  const workSeconds = f.wallSeconds - f.startupSeconds;
  if (record.train && samplesPerStep !== undefined) {
    const total = f.work.count * samplesPerStep;
    return { unit: "samples/s" as const, total, planned: total / workSeconds, measured: record.train.samplesPerSecond };
  }
  if (record.data) {
    const measured = record.data.rows / record.data.wallSeconds;
    return { unit: "rows/s" as const, total: f.work.count, planned: f.work.count / workSeconds, measured };
  }
  return undefined;
}

/**
 * The forecast `f` at the pace `record` measured; undefined where the record measured no throughput (no training or
 * Ray Data section, or nothing done).
 * @param samplesPerStep - a training job's global batch; undefined for the Ray Data kinds
 */
export function recalibrateForecast(
  record: RunRecord,
  f: Forecast,
  samplesPerStep: number | undefined,
): Recalibration | undefined {
  const p = paces(record, f, samplesPerStep);
  if (!p || !(p.measured > 0) || !(p.planned > 0)) return undefined;
  const wallSeconds = Math.ceil(f.startupSeconds + p.total / p.measured);
  return {
    unit: p.unit,
    planned: round3(p.planned),
    measured: round3(p.measured),
    ratio: round3(p.measured / p.planned),
    forecast: { wallSeconds: f.wallSeconds, costUsd: f.costUsd },
    recalibrated: { wallSeconds, costUsd: round2((f.costUsd * wallSeconds) / f.wallSeconds) },
  };
}
