/**
 * A real Prometheus server for tests, loaded with fixture data: raw series written as OpenMetrics and turned into
 * TSDB blocks by `promtool tsdb create-blocks-from openmetrics`, the recording rules evaluated over them by `promtool
 * tsdb create-blocks-from rules` against the running server (Prometheus evaluates rules only on new samples), then
 * the server restarted with both. Listens on a free loopback port; every wait is bounded.
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { stringify } from "yaml";
import type { RuleGroup } from "../../core/observability/rules";
import { HANG_GUARD_MS } from "./hang-guard";
import { findTool } from "./tools";

const run = promisify(execFile);
export const promtoolPath = findTool("promtool", "PROMTOOL");
export const prometheusPath = findTool("prometheus", "PROMETHEUS");

/** One sample series: a metric name, its labels and one value per step. */
export interface Series {
  readonly name: string;
  readonly type: "gauge" | "counter";
  readonly labels: Readonly<Record<string, string>>;
  /** One value per step; null: no sample at that step (the series did not exist yet, or any more). */
  readonly values: readonly (number | null)[];
}

/** The series as OpenMetrics text, one sample per `stepSeconds` from `startSeconds`. */
export function openMetrics(series: readonly Series[], startSeconds: number, stepSeconds: number): string {
  const byName = new Map<string, Series[]>();
  for (const s of series) byName.set(s.name, [...(byName.get(s.name) ?? []), s]);
  const lines: string[] = [];
  for (const [name, list] of byName) {
    lines.push(`# TYPE ${name} ${list[0]!.type === "counter" ? "counter" : "gauge"}`);
    for (const s of list) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(",");
      const metric = list[0]!.type === "counter" ? `${name}_total` : name;
      s.values.forEach((v, i) => {
        if (v !== null) lines.push(`${metric}{${labels}} ${v} ${startSeconds + i * stepSeconds}`);
      });
    }
  }
  return `${lines.join("\n")}\n# EOF\n`;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

/** A running server: its URL, and a way to stop it. */
export interface RunningPrometheus {
  readonly url: string;
  stop(): Promise<void>;
}

async function start(dataDir: string, work: string): Promise<RunningPrometheus> {
  const port = await freePort();
  const config = join(work, "prometheus.yml");
  writeFileSync(config, stringify({ global: { scrape_interval: "15s" } }));
  const child: ChildProcess = spawn(
    prometheusPath!,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${dataDir}`,
      // Fixture samples are old: keep them.
      "--storage.tsdb.retention.time=100y",
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let log = "";
  child.stderr!.on("data", (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  // Polls until ready; gives up after HANG_GUARD_MS worth of polls (a guard: a quiet machine is ready in a second).
  const polls = HANG_GUARD_MS / 100;
  for (let i = 0; i < polls; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${log}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i === polls - 1) throw new Error(`prometheus did not become ready: ${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Moves every block of `from` into `to`. */
function moveBlocks(from: string, to: string): void {
  for (const entry of readdirSync(from)) renameSync(join(from, entry), join(to, entry));
}

/** Recording rules in evaluation levels: each level reads only raw series and the records of earlier levels. */
function levels(groups: readonly RuleGroup[]): { record: string; expr: string }[][] {
  let left = groups.flatMap((g) => g.rules.flatMap((r) => ("record" in r ? [r] : [])));
  const out: { record: string; expr: string }[][] = [];
  while (left.length) {
    const pending = new Set(left.map((r) => r.record));
    const ready = left.filter((r) => ![...pending].some((p) => p !== r.record && r.expr.includes(p)));
    if (ready.length === 0) throw new Error("recording rules depend on each other in a cycle");
    out.push(ready);
    left = left.filter((r) => !ready.includes(r));
  }
  return out;
}

/**
 * Starts a server holding `series` (one sample per `stepSeconds` from `startSeconds`) and, evaluated over the same
 * window, the recording rules of `groups`: promtool backfills a level of rules from the running server, which then
 * restarts with the new blocks (a backfilled rule cannot read another rule of the same run).
 */
export async function prometheusWith(
  series: readonly Series[],
  groups: readonly RuleGroup[],
  startSeconds: number,
  stepSeconds: number,
): Promise<RunningPrometheus> {
  const work = mkdtempSync(join(tmpdir(), "ray-gpu-prometheus-"));
  const data = join(work, "data");
  mkdirSync(data);
  writeFileSync(join(work, "input.om"), openMetrics(series, startSeconds, stepSeconds));
  await run(promtoolPath!, ["tsdb", "create-blocks-from", "openmetrics", "input.om", data], { cwd: work });
  const end = startSeconds + (Math.max(...series.map((s) => s.values.length)) - 1) * stepSeconds;
  for (const [i, level] of levels(groups).entries()) {
    writeFileSync(join(work, `rules-${i}.yaml`), stringify({ groups: [{ name: `level-${i}`, rules: level }] }));
    const server = await start(data, work);
    const out = join(work, `rules-blocks-${i}`);
    try {
      await run(
        promtoolPath!,
        [
          "tsdb",
          "create-blocks-from",
          "rules",
          `--start=${startSeconds}`,
          `--end=${end}`,
          `--url=${server.url}`,
          `--output-dir=${out}`,
          `--eval-interval=${stepSeconds}s`,
          `rules-${i}.yaml`,
        ],
        { cwd: work },
      );
    } finally {
      await server.stop();
    }
    moveBlocks(out, data);
  }
  return start(data, work);
}

/** An instant query's result at `timeSeconds`. */
export async function query(
  url: string,
  expr: string,
  timeSeconds: number,
): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const r = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr, time: String(timeSeconds) })}`);
  const body = (await r.json()) as { status: string; error?: string; data: { result: never[] } };
  if (body.status !== "success") throw new Error(`${expr}: ${body.error}`);
  return body.data.result;
}
