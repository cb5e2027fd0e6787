/**
 * `ray-gpu report` against a real Prometheus server loaded with two jobs of the prod stack
 * (test/helpers/report-fixtures.ts): llm-pretrain keeps its plan; embed-chunks runs for part of the window only, at low
 * utilization, and spills. Every number of the report is one the fixture implies. The sample examples/report/ ships is
 * recorded from the same server: the committed file must be what the recorder writes now.
 */
import { runMain } from "../../helpers/run-main";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobReport } from "../../../cli/report/job-report";
import { recordSample, SAMPLE_FILE } from "../../../scripts/record-report-sample";
import { repoRoot } from "../../helpers/fixtures";
import { prometheusPath, promtoolPath, type RunningPrometheus } from "../../helpers/prometheus";
import { END, GIB, prodPrometheus, START, STEP } from "../../helpers/report-fixtures";
import { findTool, missingReason, openPage } from "../../helpers/tools";
import { expectTrainReport, expectTrainText } from "./train-expectations";

const skip =
  missingReason("promtool", promtoolPath, "apt-get install prometheus") ??
  missingReason("prometheus", prometheusPath, "apt-get install prometheus");

const chromium = findTool("chromium", "CHROMIUM");
const noChromium = missingReason("chromium", chromium, "apt-get install chromium");

async function report(...args: string[]) {
  return runMain(["report", "--stack", "prod", ...args]);
}

describe.skipIf(skip)("ray-gpu report on a real Prometheus", () => {
  let prom: RunningPrometheus;
  beforeAll(async () => {
    prom = await prodPrometheus();
  });
  afterAll(async () => prom?.stop());

  /** One job over the fixture's hour. */
  const hour = (job: string) => ["--job", job, "--prometheus", prom.url, "--from", String(START), "--to", String(END)];

  it("reports a job that kept its plan, every number next to its promise", async () => {
    const r = await report(...hour("llm-pretrain"), "--json");
    expect(r.err).toBe("");
    const doc = JSON.parse(r.out) as JobReport;
    expectTrainReport(doc);
    expectTrainText((await report(...hour("llm-pretrain"))).out, doc);
  });

  it("records the sample examples/report/ ships: the committed file is what the recorder writes now", async () => {
    // On a difference: npx tsx scripts/record-report-sample.ts, and commit the result.
    expect(await recordSample(prom.url)).toBe(readFileSync(join(repoRoot, SAMPLE_FILE), "utf8"));
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
      /^ray-gpu: Prometheus at http:\/\/127\.0\.0\.1:\d+ has no pods of job llm-sweep in namespace ray-jobs in the 7d before/,
    );
    const none = await report(...hour("llm-sweep"));
    expect(none.code).toBe(2);
    expect(none.err).toMatch(
      /Prometheus at http:\S+ has no GPU metrics of job llm-sweep in namespace ray-jobs between/,
    );
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
