/** What `ray-gpu report` does, loaded only when it runs. */
import { resolve } from "node:path";
import { writeOutputFile } from "../output/file";
import { HTML_PAGE } from "../output/html-page";
import { stableJson } from "../../core/serialize";
import { loadRuntimePackage } from "../../io/runtime-package";
import { UsageError, type CommandContext } from "../io";
import { jobLifetime, measureJob, utilizationTimeline } from "./prometheus";
import { instantQuery, rangeQuery, type Query, type Transport } from "./prometheus-api";
import { httpTransport, prometheusBaseUrl } from "./prometheus-http";
import {
  readRecording,
  recordedFlags,
  recorder,
  RECORDING_FILE,
  recordingText,
  replayTransport,
  SAVED_SOURCE,
} from "./recording";
import { reportHtml } from "./html";
import { jobReport, type Promised } from "./job-report";
import { reportText } from "./text";
import { usdPerNodeHour } from "../../core/pools";
import { planStackFile } from "../input/stack-file";

/** The options of `ray-gpu report`: exactly one of `prometheus` and `recording`. */
export interface ReportOptions {
  job: string;
  stack: string;
  /** A live server's base URL. */
  prometheus?: string;
  /** A file `saveRecording` wrote: every answer comes from it. */
  recording?: string;
  /** Where to write the live server's answers (with `prometheus` only), once the report is made. */
  saveRecording?: string;
  /** @default - the job's lifetime (or the recording's `fromSeconds`) */
  from?: string;
  /** @default - now (or the recording's `toSeconds`) */
  to?: string;
  /** @default "7d" (or the recording's) */
  lookback?: string;
  json?: boolean;
  html?: string;
}

/** How far back `report` looks for the job's pods when neither `--lookback` nor a recording says. */
export const DEFAULT_LOOKBACK = "7d";

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
    usdPerNodeHour: usdPerNodeHour(pool.instanceTypes),
    capacityType: pool.capacityType,
    instanceTypes: pool.instanceTypes,
    forecast: w.forecast.forecast ?? null,
  };
}

/** Where the answers come from, the window's flags (given, or the recording's), and how to save a recording. */
interface Source {
  readonly transport: Transport;
  readonly fromSeconds: number | undefined;
  readonly toSeconds: number;
  readonly lookback: string;
  /** Writes every answer read to `--save-recording`'s file; absent without the flag. */
  readonly save?: () => void;
}

/** `--from`/`--to` as given, or undefined. */
const givenTime = (text: string | undefined, flag: string) => (text === undefined ? undefined : parseTime(text, flag));

/** A live Prometheus, its answers kept for `--save-recording` when given. */
function liveSource(ctx: CommandContext, opts: ReportOptions & { prometheus: string }): Source {
  const http = httpTransport(prometheusBaseUrl(opts.prometheus));
  const fromSeconds = givenTime(opts.from, "--from");
  const toSeconds = givenTime(opts.to, "--to") ?? Math.floor(Date.now() / 1000);
  const lookback = opts.lookback ?? DEFAULT_LOOKBACK;
  const file = opts.saveRecording;
  if (file === undefined) return { transport: http, fromSeconds, toSeconds, lookback };
  const tap = recorder(http);
  const meta = { source: SAVED_SOURCE, stack: opts.stack, job: opts.job, fromSeconds, toSeconds, lookback };
  const target = { flag: "--save-recording", file, cwd: ctx.io.cwd };
  const save = () => writeOutputFile(target, recordingText(meta, tap.answers()), RECORDING_FILE);
  return { transport: tap.transport, fromSeconds, toSeconds, lookback, save };
}

/** A recording of the same stack and job; the window's flags default to the ones it was made with. */
function replaySource(ctx: CommandContext, opts: ReportOptions & { recording: string }): Source {
  if (opts.saveRecording !== undefined)
    throw new UsageError(
      "--save-recording saves what a live Prometheus answers: give it with --prometheus <url>, not with --recording",
    );
  const rec = readRecording(resolve(ctx.io.cwd, opts.recording), opts.recording);
  if (rec.stack !== opts.stack || rec.job !== opts.job)
    throw new UsageError(
      `recording ${opts.recording} was made with ${recordedFlags(rec)}: give the same --stack and --job to replay ` +
        `it, or record the job you want from a live server with --prometheus <url> --save-recording <file>`,
    );
  return {
    transport: replayTransport(rec, opts.recording),
    fromSeconds: givenTime(opts.from, "--from") ?? rec.fromSeconds,
    toSeconds: givenTime(opts.to, "--to") ?? rec.toSeconds,
    lookback: opts.lookback ?? rec.lookback,
  };
}

/** The source `--prometheus` or `--recording` names: exactly one of them. */
function sourceOf(ctx: CommandContext, opts: ReportOptions): Source {
  const { prometheus, recording } = opts;
  if (prometheus !== undefined && recording !== undefined)
    throw new UsageError(
      "give --prometheus <url> or --recording <file>, not both: a recording answers every query itself",
    );
  if (prometheus !== undefined) return liveSource(ctx, { ...opts, prometheus });
  if (recording !== undefined) return replaySource(ctx, { ...opts, recording });
  throw new UsageError(
    "give --prometheus <url> (a live server, e.g. http://localhost:9090 through kubectl port-forward) or " +
      "--recording <file> (answers saved with --save-recording, e.g. examples/report/prod-llm-pretrain.recording.json)",
  );
}

/** The window: --from/--to when given, else the job's lifetime within --lookback before --to (or now). */
async function windowOf(src: Source, p: Promised, step: number) {
  const { fromSeconds, toSeconds } = src;
  if (fromSeconds !== undefined) {
    if (fromSeconds >= toSeconds) throw new UsageError("--from must be before --to");
    return { fromSeconds, toSeconds };
  }
  const lookbackSeconds = parseLookback(src.lookback);
  const q: Query = instantQuery(src.transport);
  const search = { namespace: p.namespace, workload: p.workload, nowSeconds: toSeconds, lookbackSeconds };
  const life = await jobLifetime(q, { ...search, stepSeconds: step });
  if (!life)
    throw new UsageError(
      `${src.transport.name} has no pods of job ${p.workload} in namespace ${p.namespace} in the ${src.lookback} ` +
        `before ${new Date(toSeconds * 1000).toISOString()}`,
    );
  return life;
}

/**
 * Measures the job on Prometheus (or replays a recording of it) and prints its report next to its plan; with
 * `--save-recording`, also writes every answer it read.
 */
export async function runReport(ctx: CommandContext, opts: ReportOptions): Promise<void> {
  const src = sourceOf(ctx, opts);
  const p = promised(ctx, opts);
  const step = 60;
  const { fromSeconds, toSeconds } = await windowOf(src, p, step);
  const window = { namespace: p.namespace, workload: p.workload, fromSeconds, toSeconds, stepSeconds: step };
  const [measured, timeline] = await Promise.all([
    measureJob(instantQuery(src.transport), window),
    utilizationTimeline(rangeQuery(src.transport), window),
  ]);
  if (measured.averagePercent === undefined)
    throw new UsageError(
      `${src.transport.name} has no GPU metrics of job ${p.workload} in namespace ${p.namespace} between ` +
        `${new Date(fromSeconds * 1000).toISOString()} and ${new Date(toSeconds * 1000).toISOString()}`,
    );
  const report = jobReport(p, measured, { fromSeconds, toSeconds }, timeline);
  src.save?.();
  if (opts.html !== undefined)
    writeOutputFile({ flag: "--html", file: opts.html, cwd: ctx.io.cwd }, reportHtml(report), HTML_PAGE);
  ctx.io.out(opts.json ? stableJson(report) : reportText(report));
}
