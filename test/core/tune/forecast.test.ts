/** The forecast at a run's measured pace: the same work, the run's throughput, the time and cost that follow. */
import { describe, expect, it } from "vitest";
import type { Forecast } from "../../../core/forecast/types";
import { recalibrateForecast } from "../../../core/tune/forecast";
import { RUN_RECORD_API_VERSION, RunRecordSchema, type RunRecord } from "../../../core/tune/run-record";

const record = (sections: Partial<RunRecord>): RunRecord =>
  RunRecordSchema.parse({
    apiVersion: RUN_RECORD_API_VERSION,
    kind: "RunRecord",
    workload: { name: "job", kind: "TrainingJob", environment: "prod", planDigest: `sha256:${"0".repeat(64)}` },
    source: "runtime",
    recordedAt: "2026-12-03T16:00:00Z",
    ...sections,
  });

/** 1,000 steps of 64 samples in 10,000 s of work after a 60 s startup, for $100. */
const forecast: Forecast = {
  work: { unit: "optimizer steps", count: 1000, from: "steps: 1000" },
  wallSeconds: 10_060,
  startupSeconds: 60,
  gpuHours: 44.7,
  costUsd: 100,
  costIsUpperBound: false,
  gpuUtilization: 0.9,
  bound: "gpu-compute",
  unitSeconds: 10,
  waitShare: 0,
};

describe("recalibrateForecast", () => {
  it("a training run twice as fast as forecast halves the work's time, and the cost with the wall time", () => {
    const train = { workers: 4, steps: 100, dataWaitFraction: 0.01, samplesPerSecond: 12.8 };
    const r = recalibrateForecast(record({ train }), forecast, 64)!;
    expect(r).toMatchObject({ unit: "samples/s", planned: 6.4, measured: 12.8, ratio: 2 });
    expect(r.recalibrated.wallSeconds).toBe(60 + 5000);
    expect(r.recalibrated.costUsd).toBeCloseTo((100 * 5060) / 10_060, 2);
    expect(r.forecast).toEqual({ wallSeconds: 10_060, costUsd: 100 });
  });

  it("a Ray Data run's pace is the rows it wrote over its wall time", () => {
    const rows = { ...forecast, work: { unit: "rows" as const, count: 1_000_000, from: "dataset.rows: 1000000" } };
    const operators = [
      { name: "Embed", stage: "gpu" as const, slots: 1, tasks: 1, busySeconds: 10, rowsOut: 2000, maxBlockBytes: 1 },
    ];
    const r = recalibrateForecast(record({ data: { wallSeconds: 20, rows: 2000, operators } }), rows, undefined)!;
    expect(r).toMatchObject({ unit: "rows/s", planned: 100, measured: 100, ratio: 1 });
    expect(r.recalibrated.wallSeconds).toBe(10_060);
  });

  it("says nothing where the run measured no throughput", () => {
    const idle = { workers: 4, steps: 0, dataWaitFraction: 0, samplesPerSecond: 0 };
    expect(recalibrateForecast(record({ train: idle }), forecast, 64)).toBeUndefined();
    expect(recalibrateForecast(record({}), forecast, 64)).toBeUndefined();
  });
});
