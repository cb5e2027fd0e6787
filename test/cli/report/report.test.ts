/**
 * `ray-gpu report` against a real Prometheus server loaded with two jobs of the prod stack: llm-pretrain keeps its
 * plan; embed-chunks runs for part of the window only, at low utilization, and spills. Every number of the report is
 * one the fixture implies.
 */
import { runMain } from "../../helpers/run-main";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobReport } from "../../../cli/report/job-report";
import { stackRuleGroup } from "../../../core/observability/rules";
import { jobSeries, type JobFixture } from "../../helpers/job-metrics";
import { prometheusPath, prometheusWith, promtoolPath, type RunningPrometheus } from "../../helpers/prometheus";
import { findTool, missingReason, openPage } from "../../helpers/tools";

const skip =
  missingReason("promtool", promtoolPath, "apt-get install prometheus") ??
  missingReason("prometheus", prometheusPath, "apt-get install prometheus");

const chromium = findTool("chromium", "CHROMIUM");
const noChromium = missingReason("chromium", chromium, "apt-get install chromium");

const START = 1_767_225_600; // 2026-01-01T00:00:00Z
const STEP = 60;
const STEPS = 61;
const END = START + (STEPS - 1) * STEP;
const GIB = 1024 ** 3;

/** prod's llm-pretrain: 8 workers x 4 GPUs on g5.12xlarge; worker 7 at 80%, the rest at 97%. */
const TRAIN: JobFixture = {
  namespace: "ray-jobs",
  workload: "llm-pretrain",
  workers: 8,
  gpusPerWorker: 4,
  steps: STEPS,
  utilization: (w) => (w === 7 ? 80 : 97),
  memoryUsedMiB: (_w, g) => 17000 + g * 100,
  rowsPerSecond: 0,
  spilledBytes: () => 0,
  telemetry: { waitShare: 0.03, samplesPerSecond: 96 },
};
/** prod's embed-chunks: 8 workers x 1 GPU on g5.2xlarge, alive from step 10 to 50, at 60%, spilling 1 GiB from step 30. */
const EMBED: JobFixture = {
  namespace: "ray-jobs",
  workload: "embed-chunks",
  workers: 8,
  gpusPerWorker: 1,
  steps: STEPS,
  utilization: () => 60,
  memoryUsedMiB: () => 9000,
  rowsPerSecond: 2000,
  spilledBytes: (t) => (t >= 30 ? GIB : 0),
  alive: [10, 50],
};

async function report(...args: string[]) {
  return runMain(["report", "--stack", "prod", ...args]);
}

describe.skipIf(skip)("ray-gpu report on a real Prometheus", () => {
  let prom: RunningPrometheus;
  beforeAll(async () => {
    const rules = [
      stackRuleGroup({ namespace: "ray-jobs", scaleDownUnneededSeconds: 600, scaleToZeroPools: ["a10g"] }),
    ];
    prom = await prometheusWith([...jobSeries(TRAIN, STEP), ...jobSeries(EMBED, STEP)], rules, START, STEP);
  });
  afterAll(async () => prom?.stop());

  /** One job over the fixture's hour. */
  const hour = (job: string) => ["--job", job, "--prometheus", prom.url, "--from", String(START), "--to", String(END)];

  it("reports a job that kept its plan, every number next to its promise", async () => {
    const r = await report(...hour("llm-pretrain"), "--json");
    expect(r.err).toBe("");
    const doc = JSON.parse(r.out) as JobReport;
    expect(doc.window).toEqual({ from: "2026-01-01T00:00:00Z", to: "2026-01-01T01:00:00Z", seconds: 3600 });
    expect(doc.gpuUtilization.averagePercent).toBeCloseTo((7 * 97 + 80) / 8, 3);
    expect(doc.gpuUtilization.targetPercent).toBe(90);
    expect(doc.gpuUtilization.perWorker).toHaveLength(8);
    expect(doc.gpuUtilization.perWorker.filter((w) => w.averagePercent === 80 && w.p10Percent === 80)).toHaveLength(1);
    expect(doc.gpuMemory).toMatchObject({ peakGiB: Number((17300 / 1024).toFixed(3)), usableGiB: 21.99 });
    expect(doc.spilledBytes.peak).toBe(0);
    expect(doc.dataWaitFraction).toBeCloseTo(0.03, 3);
    // per second the GPUs were held, measured to a step (60 s) of the hour
    expect(Math.abs(doc.samplesPerSecond! / 96 - 1)).toBeLessThan(0.03);
    // 32 GPUs and 8 nodes for the hour, to a step (60 s) at its edge; g5.12xlarge at 45.376 / 8 nodes a node-hour
    expect(Math.abs(doc.usage.gpuHours - 32)).toBeLessThanOrEqual((32 * STEP) / 3600);
    expect(Math.abs(doc.usage.nodeHours - 8)).toBeLessThanOrEqual((8 * STEP) / 3600);
    expect(doc.usage.usd).toBeCloseTo(doc.usage.nodeHours * (45.376 / 8), 1);
    expect(doc.usage.plannedGpus).toBe(32);
    expect(doc.verdict.kept).toBe(true);
    expect(doc.verdict.line).toMatch(/^llm-pretrain kept its plan: 94\.9% average GPU utilization \(target 90%\)/);
    const text = await report(...hour("llm-pretrain"));
    expect(text.out.split("\n")[0]).toBe(doc.verdict.line);
    expect(text.out).toMatch(/GPU utilization, average\s+94\.9%\s+90% target/);
  });

  it("finds a job's lifetime by itself and says where it fell short", async () => {
    const r = await report("--job", "embed-chunks", "--prometheus", prom.url, "--to", String(END), "--json");
    const doc = JSON.parse(r.out) as JobReport;
    // alive from step 10 to 50: 40 minutes (its submitter pod, there the whole hour, does not count)
    expect(doc.window).toEqual({ from: "2026-01-01T00:10:00Z", to: "2026-01-01T00:50:00Z", seconds: 2400 });
    // the GPUs were held for those 40 minutes, to a step: 8 GPUs, 8 nodes
    expect(Math.abs(doc.usage.gpuHours - (8 * 40) / 60)).toBeLessThanOrEqual((8 * STEP) / 3600);
    // the same job over a wider window costs the same and produces as many rows a second
    const wide = JSON.parse((await report(...hour("embed-chunks"), "--json")).out) as JobReport;
    // Backfilled samples carry no staleness markers, so Prometheus's 5-minute lookback stretches each raw series, and
    // the recording rule over it again, past its last sample (a live Prometheus marks a vanished target's series stale
    // at once): at most 8 GPUs x 10 min more. Before, the window's length itself was billed: 15.3 GPU-hours for 5.3.
    expect(wide.usage.gpuHours).toBeGreaterThanOrEqual(doc.usage.gpuHours);
    expect(wide.usage.gpuHours).toBeLessThanOrEqual(doc.usage.gpuHours + (8 * 10 * 60 + 8 * STEP) / 3600);
    // (the same stretch lowers its rows per held second, here by a sixth)
    expect(Math.abs(wide.rayDataRowsPerSecond["MapBatches(Embed)"]! / 2000 - 1)).toBeLessThan(0.25);
    expect(doc.gpuUtilization.averagePercent).toBe(60);
    expect(doc.spilledBytes.peak).toBe(GIB);
    expect(Math.abs(doc.rayDataRowsPerSecond["MapBatches(Embed)"]! / 2000 - 1)).toBeLessThan(0.05);
    // no telemetry published: said, not made up
    expect(doc.dataWaitFraction).toBeNull();
    expect(doc.verdict.kept).toBe(false);
    expect(doc.verdict.shortfalls).toEqual([
      "GPU utilization 60.0% is below its 85% target",
      "1.00 GiB spilled (the plan spills nothing)",
    ]);
  });

  it("answers a job with no metrics, a bad time and an unreachable server with a usage error", async () => {
    expect((await report("--job", "llm-sweep", "--prometheus", prom.url, "--to", String(END))).err).toMatch(
      /Prometheus has no pods of job llm-sweep in namespace ray-jobs in the 7d before/,
    );
    const none = await report(...hour("llm-sweep"));
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/Prometheus has no GPU metrics of job llm-sweep in namespace ray-jobs between/);
    expect((await report("--job", "nope", "--prometheus", prom.url)).err).toMatch(/no workload "nope" in stack prod/);
    expect((await report("--job", "llm-pretrain", "--prometheus", prom.url, "--from", "yesterday")).code).toBe(2);
    const down = await report("--job", "llm-pretrain", "--prometheus", "http://127.0.0.1:9", "--to", String(END));
    expect(down.code).toBe(2);
    expect(down.err).toMatch(/cannot query Prometheus at http:\/\/127\.0\.0\.1:9/);
  });

  it.skipIf(noChromium)(
    "--html draws the report: it loads in Chromium without errors and shows the JSON's numbers",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "ray-gpu-report-"));
      const html = join(dir, "report.html");
      const r = await report(...hour("llm-pretrain"), "--json", "--html", html);
      const doc = JSON.parse(r.out) as JobReport;
      // RAY_GPU_SCREENSHOTS=<folder> keeps the screenshot (docs/images/report.png is one, taken by this test).
      const shot = process.env["RAY_GPU_SCREENSHOTS"]
        ? join(process.env["RAY_GPU_SCREENSHOTS"], "report.png")
        : join(dir, "report.png");
      const page = await openPage(chromium!, html, shot);
      expect(page.errors).toEqual([]);
      expect(page.polylines).toBe(doc.gpuUtilization.perWorker.length);
      expect(page.shown.length).toBeGreaterThan(10);
      const lookup = (key: string) => key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc);
      for (const [key, text] of page.shown)
        expect(text, key).toBe(key === "verdict.line" ? doc.verdict.line : String(lookup(key)));
      expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
    },
  );
});
