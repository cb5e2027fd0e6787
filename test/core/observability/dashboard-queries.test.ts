/**
 * Every panel of the jobs dashboard, queried on a real Prometheus server loaded with a fixture job's metrics (and the
 * stack's recording rules evaluated over them by promtool): each query returns the series the panel should draw, with
 * the values the fixture implies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_PANELS, jobDashboard } from "../../../core/observability/dashboards";
import { stackRuleGroup } from "../../../core/observability/rules";
import { jobSeries, type JobFixture } from "../../helpers/job-metrics";
import { prometheusPath, prometheusWith, promtoolPath, query, type RunningPrometheus } from "../../helpers/prometheus";
import { missingReason } from "../../helpers/tools";

const skip =
  missingReason("promtool", promtoolPath, "apt-get install prometheus") ??
  missingReason("prometheus", prometheusPath, "apt-get install prometheus");

const START = 1_767_225_600; // 2026-01-01T00:00:00Z
const STEP = 60;
const JOB: JobFixture = {
  namespace: "ray-jobs",
  workload: "embed-chunks",
  workers: 2,
  gpusPerWorker: 4,
  steps: 61,
  // worker 0 holds 90 + g %, worker 1 holds 80 + g %: the job averages 86.5 %
  utilization: (w, g) => (w === 0 ? 90 : 80) + g,
  memoryUsedMiB: (w) => (w === 0 ? 18000 : 17000),
  rowsPerSecond: 1500,
  spilledBytes: () => 0,
  telemetry: { waitShare: 0.04, samplesPerSecond: 320, stepsPerSecond: 2.5, actorBusyShare: 0.9 },
};
const END = START + (JOB.steps - 1) * STEP;
const substitute = (expr: string) => expr.replaceAll("$namespace", JOB.namespace).replaceAll("$workload", JOB.workload);

describe.skipIf(skip)("the jobs dashboard on a real Prometheus", () => {
  let prom: RunningPrometheus;
  beforeAll(async () => {
    prom = await prometheusWith(
      jobSeries(JOB, STEP),
      [stackRuleGroup({ namespace: JOB.namespace, scaleDownUnneededSeconds: 600, scaleToZeroPools: ["a10g"] })],
      START,
      STEP,
    );
  });
  afterAll(async () => prom?.stop());

  it("every panel's query returns data for the job", async () => {
    for (const p of JOB_PANELS) {
      const result = await query(prom.url, substitute(p.expr), END);
      expect(result.length, p.title).toBeGreaterThan(0);
    }
  });

  it("shows the values the fixture implies", async () => {
    const value = async (title: string) => {
      const p = JOB_PANELS.find((x) => x.title === title)!;
      return (await query(prom.url, substitute(p.expr), END)).map((r) => ({
        metric: r.metric,
        value: Number(r.value[1]),
      }));
    };
    expect((await value("Average GPU utilization"))[0]!.value).toBeCloseTo(86.5, 6);
    const perWorker = await value("GPU utilization per worker");
    expect(perWorker).toHaveLength(JOB.workers * JOB.gpusPerWorker);
    expect(perWorker.every((r) => r.metric["workload"] === JOB.workload && r.metric["pod"] !== undefined)).toBe(true);
    expect((await value("GPU memory used per worker")).map((r) => r.value).sort()).toEqual([
      ...Array(4).fill(17000),
      ...Array(4).fill(18000),
    ]);
    expect(
      Object.fromEntries((await value("Object store by location")).map((r) => [r.metric["Location"], r.value])),
    ).toEqual({
      MMAP_SHM: 3 * 2 * 1024 ** 3,
      SPILLED: 0,
    });
    expect((await value("Spilled bytes"))[0]!.value).toBe(0);
    expect((await value("Ray Data rows per second"))[0]).toMatchObject({
      metric: { operator: "MapBatches(Embed)" },
      value: 1500,
    });
  });

  it("the dashboard's job variable lists the job", async () => {
    const variable = (
      jobDashboard(JOB.namespace)["templating"] as { list: { name: string; query: unknown }[] }
    ).list.find((v) => v.name === "workload")!;
    const expr = /^label_values\((.+), workload\)$/.exec((variable.query as { query: string }).query)![1]!;
    const result = await query(prom.url, substitute(expr), END);
    expect(new Set(result.map((r) => r.metric["workload"]))).toEqual(new Set([JOB.workload]));
  });
});
