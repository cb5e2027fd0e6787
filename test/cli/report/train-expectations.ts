/**
 * What the report of prod's llm-pretrain over the fixture's hour says (test/helpers/report-fixtures.ts TRAIN), read
 * live from a real Prometheus (report.test.ts) or replayed from the shipped sample (recording.test.ts): every number
 * is one the fixture implies.
 */
import { expect } from "vitest";
import type { JobReport } from "../../../cli/report/job-report";
import { STEP } from "../../helpers/report-fixtures";

/** The report's JSON document, checked number by number. */
export function expectTrainReport(doc: JobReport): void {
  expect(doc.window).toEqual({ from: "2026-01-01T00:00:00Z", to: "2026-01-01T01:00:00Z", seconds: 3600 });
  expect(doc.gpuUtilization.averagePercent).toBeCloseTo((3 * 97 + 80) / 4, 3);
  expect(doc.gpuUtilization.targetPercent).toBe(90);
  expect(doc.gpuUtilization.perWorker).toHaveLength(4);
  expect(doc.gpuUtilization.perWorker.filter((w) => w.averagePercent === 80 && w.p10Percent === 80)).toHaveLength(1);
  expect(doc.gpuMemory).toMatchObject({ peakGiB: Number((17700 / 1024).toFixed(3)), usableGiB: 21.99 });
  expect(doc.spilledBytes.peak).toBe(0);
  expect(doc.dataWaitFraction).toBeCloseTo(0.03, 3);
  // per second the GPUs were held, measured to a step (60 s) of the hour
  expect(Math.abs(doc.samplesPerSecond! / 96 - 1)).toBeLessThan(0.03);
  // 32 GPUs and 4 nodes for the hour, to a step (60 s) at its edge; g5.48xlarge at 16.288 a node-hour
  expect(Math.abs(doc.usage.gpuHours - 32)).toBeLessThanOrEqual((32 * STEP) / 3600);
  // (node-hours are rounded to 3 decimals: 3.9333 reads 3.933)
  expect(Math.abs(doc.usage.nodeHours - 4)).toBeLessThanOrEqual((4 * STEP) / 3600 + 0.0005);
  expect(doc.usage.usd).toBeCloseTo(doc.usage.nodeHours * 16.288, 1);
  expect(doc.usage).toMatchObject({ plannedGpus: 32, capacityType: "on-demand", usdIsUpperBound: false });
  // the plan's forecast of one run beside the hour measured (the fixture's hour is part of a run, not all of it)
  const f = doc.forecast!;
  expect(f.measured).toEqual({
    wallSeconds: 3600,
    gpuHours: doc.usage.gpuHours,
    costUsd: doc.usage.usd,
    gpuUtilizationPercent: doc.gpuUtilization.averagePercent,
  });
  expect(f.forecast.wallSeconds).toBeGreaterThan(0);
  expect(f.wallRatio).toBeCloseTo(3600 / f.forecast.wallSeconds, 3);
  expect(f.costRatio).toBeCloseTo(doc.usage.usd / f.forecast.costUsd, 3);
  expect(doc.verdict.kept).toBe(true);
  expect(doc.verdict.line).toMatch(/^llm-pretrain kept its plan: 92\.8% average GPU utilization \(target 90%\)/);
}

/** The text view of the same report: the verdict first, then the table. */
export function expectTrainText(text: string, doc: JobReport): void {
  expect(text.split("\n")[0]).toBe(doc.verdict.line);
  expect(text).toMatch(/GPU utilization, average\s+92\.8%\s+90% target/);
  expect(text).toMatch(/bytes spilled\s+0\.00 GiB\s+0 GiB/);
  expect(text).toMatch(/cost \(GPU nodes, on demand\)\s+\$\d+\.\d\d\s+\$16\.288\/node-hour/);
  expect(text).toMatch(/time per run\s+1 h 00 min\s+\S.* forecast, measured \d+\.\d\dx/);
}
