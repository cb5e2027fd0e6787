/**
 * `ray-gpu report --recording`: the shipped sample replayed without a server gives the live report's numbers; a
 * recording is saved from a live server (here one that answers from the sample) byte for byte; the flags and the
 * file are checked; and every value read is total: NaN, infinities, text that is not a number and values outside
 * their range are usage errors naming the query, never a verdict. Nothing here needs Prometheus.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobReport } from "../../../cli/report/job-report";
import { SAVED_SOURCE, type Recording } from "../../../cli/report/recording";
import { sortKeys } from "../../../core/serialize";
import { SAMPLE_FILE } from "../../../scripts/record-report-sample";
import { repoRoot } from "../../helpers/fixtures";
import { END } from "../../helpers/report-fixtures";
import { runMain } from "../../helpers/run-main";
import { expectTrainReport, expectTrainText } from "./train-expectations";

const SAMPLE = join(repoRoot, SAMPLE_FILE);
const sample = () => JSON.parse(readFileSync(SAMPLE, "utf8")) as Recording;
const dir = mkdtempSync(join(tmpdir(), "ray-gpu-report-recording-"));
let files = 0;

/** `rec` written to a new file of the test folder; its path. */
function written(rec: unknown): string {
  const path = join(dir, `recording-${files++}.json`);
  writeFileSync(path, typeof rec === "string" ? rec : JSON.stringify(rec));
  return path;
}

const report = (...args: string[]) => runMain(["report", "--stack", "prod", "--job", "llm-pretrain", ...args]);
const replay = (file: string, ...args: string[]) => report("--recording", file, ...args);

/** The sample's answer to the query that starts with `prefix` (its path and parameters as recorded). */
const answerTo = (rec: Recording, prefix: string) => rec.answers.find((a) => a.params["query"]!.startsWith(prefix))!;
type VectorData = { result: { metric: Record<string, string>; value: [number, string] }[] };

describe("ray-gpu report --recording", () => {
  it("replays the shipped sample as the docs show it: the live report's numbers, in text, JSON and HTML", async () => {
    const html = join(dir, "sample.html");
    const json = await report("--recording", SAMPLE_FILE, "--json", "--html", html);
    expect(json.err).toBe("");
    const doc = JSON.parse(json.out) as JobReport;
    expectTrainReport(doc);
    const text = await report("--recording", SAMPLE_FILE);
    expect(text.code).toBe(0);
    expectTrainText(text.out, doc);
    const page = readFileSync(html, "utf8");
    expect(page).toContain(`data-key="gpuUtilization.averagePercent">${doc.gpuUtilization.averagePercent}<`);
    expect(page).toContain(doc.verdict.line);
    expect(page.match(/<polyline class="worker"/g)).toHaveLength(4);
  });

  it("says what the sample is: synthetic series served by a real Prometheus, not a measured run", () => {
    const rec = sample();
    expect(rec.source).toMatch(
      /^synthetic series of the TRAIN fixture .* served by Prometheus \S+; not a measured run$/,
    );
    expect(rec).toMatchObject({ stack: "prod", job: "llm-pretrain", toSeconds: END, lookback: "7d", version: 1 });
  });

  it("takes exactly one of --prometheus and --recording, and --save-recording with --prometheus only", async () => {
    const neither = await report();
    expect(neither.code).toBe(2);
    expect(neither.err).toMatch(/give --prometheus <url> \(a live server, .*\) or --recording <file>/);
    const both = await report("--prometheus", "http://127.0.0.1:9", "--recording", SAMPLE_FILE);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/give --prometheus <url> or --recording <file>, not both/);
    const save = await replay(SAMPLE_FILE, "--save-recording", join(dir, "x.json"));
    expect(save.code).toBe(2);
    expect(save.err).toMatch(/--save-recording saves what a live Prometheus answers: give it with --prometheus/);
  });

  it("names the flags a recording was made with when the report asks it something else", async () => {
    const other = await runMain(["report", "--stack", "prod", "--job", "embed-chunks", "--recording", SAMPLE_FILE]);
    expect(other.code).toBe(2);
    expect(other.err).toContain(
      `was made with --stack prod --job llm-pretrain --to ${END} --lookback 7d: give the same --stack and --job`,
    );
    const later = await replay(SAMPLE_FILE, "--to", String(END + 60));
    expect(later.code).toBe(2);
    expect(later.err).toMatch(
      new RegExp(
        `recording ${SAMPLE_FILE} has no answer to the query min\\(min_over_time\\(timestamp\\(kube_pod_labels.* at ` +
          `${END + 60}: it was recorded with --stack prod --job llm-pretrain --to ${END} --lookback 7d; give the same`,
      ),
    );
  });

  it("refuses a file that is not a recording, listing every problem with its JSON path", async () => {
    const notJson = await replay(written("{ kind"));
    expect([notJson.code, notJson.err]).toEqual([2, expect.stringMatching(/recording .* is not JSON: /)]);
    const { answers, ...rest } = sample();
    const bad = {
      ...rest,
      version: 2,
      extra: true,
      lookback: "a week",
      answers: [{ ...answers[0], path: "/api/v1/x" }],
    };
    const r = await replay(written(bad));
    expect(r.code).toBe(1);
    const lines = r.err.split("\n");
    expect(lines[1]).toMatch(/recording-\d+\.json: 4 problems$/);
    for (const path of ["version", "extra", "lookback", "answers[0].path"])
      expect(
        lines.some((l) => l.includes(`.json: ${path}:`)),
        path,
      ).toBe(true);
    const evil = await replay(written({ ...rest, "k\u009b2J": 1, stack: "\u001b[2J", answers }));
    expect(evil.err).toContain(".json: k\\x9b2J: ");
    expect([evil.err.includes("\u001b"), evil.err.includes("\u009b")]).toEqual([false, false]);
    const twice = await replay(written({ ...rest, answers: [answers[0], answers[0]] }));
    expect(twice.err).toMatch(/answers\[1\]: answers the same request as answers\[0\]/);
  });

  it.each(["NaN", "+Inf", "-Inf", "abc", "", " 5", "0x10", "1e999"])(
    "refuses the value %j from Prometheus as a usage error naming the query, never a verdict",
    async (value) => {
      const rec = sample();
      (answerTo(rec, "avg(avg_over_time(").data as VectorData).result[0]!.value[1] = value;
      const r = await replay(written(rec));
      expect([r.code, r.out]).toEqual([2, ""]);
      expect(r.err).toContain(`answered ${JSON.stringify(value)} for {} to the query avg(avg_over_time(ray_gpu:`);
      expect(r.err).toContain("not a finite number, so the report gives no verdict on it");
    },
  );

  it.each([
    ["a utilization below 0%", "avg(avg_over_time(", "-5", "a GPU utilization, from 0 to 100%"],
    ["a utilization above 100%", "avg by (pod) (avg_over_time(", "100.5", "a GPU utilization, from 0 to 100%"],
    ["negative GPU memory", "max(max_over_time(ray_gpu:gpu_memory", "-1", "an amount"],
    ["negative GPU-seconds (a negative cost)", "sum_over_time((count(ray_gpu", "-3600", "an amount"],
  ])("refuses %s as a usage error naming the query and the value", async (_what, prefix, value, what) => {
    const rec = sample();
    (answerTo(rec, prefix).data as VectorData).result[0]!.value[1] = value;
    const r = await replay(written(rec));
    expect([r.code, r.out]).toEqual([2, ""]);
    expect(r.err).toContain(`the answer to the query ${prefix}`);
    expect(r.err).toContain(` holds ${Number(value)} for {`);
    expect(r.err).toContain(`and it is ${what}`);
  });

  it("refuses a utilization out of range in the timeline too", async () => {
    const rec = sample();
    const timeline = rec.answers.find((a) => a.path === "/api/v1/query_range")!;
    (timeline.data as { result: { values: [number, string][] }[] }).result[3]!.values[10]![1] = "-0.5";
    const r = await replay(written(rec));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/the answer to the query avg by \(pod\) .* holds -0\.5 for \{pod="llm-pretrain-.*-3"\}/);
  });

  it("prints a pod name's control characters as escapes, and keeps them in JSON, escaped", async () => {
    const pod = "evil\u001b]0;owned\u0007\r\u009b2J\u202e";
    const file = written(
      readFileSync(SAMPLE, "utf8").replaceAll(
        "llm-pretrain-raycluster-abcde-gpu-worker-3",
        JSON.stringify(pod).slice(1, -1),
      ),
    );
    const text = await replay(file);
    expect(text.code).toBe(0);
    expect(text.out).toContain("  evil\\x1b]0;owned\\x07\\x0d\\x9b2J\\u202e: average 80.0%");
    const json = await replay(file, "--json");
    // nothing but line feeds below U+0020, nothing in DEL..C1, no bidirectional override
    const controls = (out: string) =>
      [...out].filter((c) => (c < " " && c !== "\n") || (c >= "\u007f" && c <= "\u009f"));
    for (const out of [text.out, json.out]) expect([controls(out), out.includes("\u202e")]).toEqual([[], false]);
    const doc = JSON.parse(json.out) as JobReport;
    expect(doc.gpuUtilization.perWorker.map((w) => w.pod)).toContain(pod);
  });
});

describe("ray-gpu report --save-recording", () => {
  const rec = sample();
  const server = createServer((req, res) => {
    const url = new URL(req.url!, "http://x");
    const params = JSON.stringify(sortKeys(Object.fromEntries(url.searchParams)));
    const hit = rec.answers.find((a) => a.path === url.pathname && JSON.stringify(sortKeys(a.params)) === params);
    const body = hit ? { status: "success", data: hit.data } : { status: "error", error: "not in the sample" };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  let url = "";
  beforeAll(() => new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok())));
  beforeAll(() => void (url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  it("writes every query and its answer, which replays to the same report, and replaces only a recording", async () => {
    const file = join(dir, "saved.json");
    const live = await report("--prometheus", url, "--to", String(END), "--json", "--save-recording", file);
    expect(live.err).toBe("");
    const saved = JSON.parse(readFileSync(file, "utf8")) as Recording;
    expect(saved).toEqual({ ...rec, source: SAVED_SOURCE });
    expect((await replay(file, "--json")).out).toBe(live.out);
    const again = await report("--prometheus", url, "--to", String(END), "--save-recording", file);
    expect(again.code).toBe(0);
    const notOurs = join(dir, "notes.json");
    writeFileSync(notOurs, '{"kind": "notes"}');
    const refused = await report("--prometheus", url, "--to", String(END), "--save-recording", notOurs);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`--save-recording ${notOurs} exists and is not a recording ray-gpu wrote`);
  });
});
