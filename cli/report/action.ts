/** What `ray-gpu report` does, loaded only when it runs. */
import { writeOutputFile } from "../output/file";
import { GENERATOR_META } from "../output/html-page";
import { stableJson } from "../../core/serialize";
import { loadRuntimePackage } from "../../io/runtime-package";
import { UsageError, type CommandContext } from "../io";
import { jobLifetime, measureJob, utilizationTimeline } from "./prometheus";
import { httpQuery, httpRangeQuery, prometheusBaseUrl, type Query } from "./prometheus-http";
import { reportHtml } from "./html";
import { jobReport, type Promised } from "./job-report";
import { reportText } from "./text";
import { planStackFile } from "../input/stack-file";

/** The options of `ray-gpu report`. */
export interface ReportOptions {
  job: string;
  prometheus: string;
  stack: string;
  from?: string;
  to?: string;
  lookback: string;
  json?: boolean;
  html?: string;
}

/** Seconds since the epoch of an RFC 3339 time or a number of seconds. */
export function parseTime(text: string, flag: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Date.parse(text) / 1000;
  if (!Number.isFinite(seconds))
    throw new UsageError(
      `${flag} ${JSON.stringify(text)}: give an RFC 3339 time (2026-12-01T10:00:00Z) or Unix seconds`,
    );
  return seconds;
}

/** "7d", "12h", "90m" in seconds. */
export function parseLookback(text: string): number {
  const m = /^(\d+)([dhm])$/.exec(text);
  if (!m) throw new UsageError(`--lookback ${JSON.stringify(text)}: give a duration such as 7d, 12h or 90m`);
  return Number(m[1]) * { d: 86400, h: 3600, m: 60 }[m[2] as "d" | "h" | "m"];
}

/** What the plan promised the job: its target, memory, GPUs and node price. */
function promised(ctx: CommandContext, opts: ReportOptions): Promised {
  const { plan } = planStackFile(ctx.dir(), opts.stack, { runtime: loadRuntimePackage() });
  const w = plan.workloads.find((x) => x.name === opts.job);
  if (!w)
    throw new UsageError(
      `no workload "${opts.job}" in stack ${opts.stack}; its workloads are ${plan.workloads.map((x) => x.name).join(", ")}`,
    );
  const pool = plan.pools.gpu.find((p) => p.name === w.nodePool)!;
  return {
    workload: w.name,
    kind: w.kind,
    namespace: plan.namespace,
    gpuUtilizationTargetPercent: w.gpuUtilizationTargetPercent,
    requiredGiB: w.memory.memory.requiredGiB,
    usableGiB: w.memory.memory.usableGiB,
    gpus: w.gpus,
    workers: w.shape.worker.replicas,
    usdPerNodeHour: pool.usdPerHourAtMax / pool.maxNodes,
  };
}

/** The window: --from/--to when given, else the job's lifetime within --lookback before --to (or now). */
async function windowOf(q: Query, p: Promised, opts: ReportOptions, step: number) {
  const to = opts.to === undefined ? Math.floor(Date.now() / 1000) : parseTime(opts.to, "--to");
  if (opts.from !== undefined) {
    const from = parseTime(opts.from, "--from");
    if (from >= to) throw new UsageError("--from must be before --to");
    return { fromSeconds: from, toSeconds: to };
  }
  const life = await jobLifetime(q, {
    namespace: p.namespace,
    workload: p.workload,
    nowSeconds: to,
    lookbackSeconds: parseLookback(opts.lookback),
    stepSeconds: step,
  });
  if (!life)
    throw new UsageError(
      `Prometheus has no pods of job ${p.workload} in namespace ${p.namespace} in the ${opts.lookback} before ${new Date(to * 1000).toISOString()}`,
    );
  return life;
}

/** Measures the job on Prometheus and prints its report next to its plan. */
export async function runReport(ctx: CommandContext, opts: ReportOptions): Promise<void> {
  const prometheus = prometheusBaseUrl(opts.prometheus);
  const query: Query = httpQuery(prometheus);
  const p = promised(ctx, opts);
  const step = 60;
  const { fromSeconds, toSeconds } = await windowOf(query, p, opts, step);
  const window = { namespace: p.namespace, workload: p.workload, fromSeconds, toSeconds, stepSeconds: step };
  const [measured, timeline] = await Promise.all([
    measureJob(query, window),
    utilizationTimeline(httpRangeQuery(prometheus), window),
  ]);
  if (measured.averagePercent === undefined)
    throw new UsageError(
      `Prometheus has no GPU metrics of job ${p.workload} in namespace ${p.namespace} between ` +
        `${new Date(fromSeconds * 1000).toISOString()} and ${new Date(toSeconds * 1000).toISOString()}`,
    );
  const report = jobReport(p, measured, { fromSeconds, toSeconds }, timeline);
  if (opts.html !== undefined)
    writeOutputFile({ flag: "--html", file: opts.html, cwd: ctx.io.cwd }, reportHtml(report), GENERATOR_META);
  ctx.io.out(opts.json ? stableJson(report) : reportText(report));
}
