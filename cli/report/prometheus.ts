/**
 * What `ray-gpu report` asks Prometheus about one job, over one window: GPU utilization (average and 10th percentile,
 * per worker and overall), peak GPU memory, bytes spilled, Ray Data throughput, and the GPU- and node-seconds the job
 * held. Every query reads the recording rules the stack installs (core/observability/rules) or the exporters' own
 * metrics; the tests run them on a real Prometheus.
 */
import { ksmLabel, METRICS, RECORDED } from "../../core/observability/metrics";
import { round3 } from "../../core/quantity";
import { byCodePoint } from "../../core/serialize";
import { UsageError } from "../io";
import { z } from "zod";

/** One job over one window: `[fromSeconds, toSeconds]`, sampled every `stepSeconds` for the percentiles. */
export interface JobWindow {
  readonly namespace: string;
  readonly workload: string;
  readonly fromSeconds: number;
  readonly toSeconds: number;
  readonly stepSeconds: number;
}

/** An instant vector: labels and value per series. */
export type Vector = { readonly metric: Readonly<Record<string, string>>; readonly value: number }[];

/** Runs an instant query at a time; the CLI's is HTTP, tests may pass their own. */
export type Query = (expr: string, timeSeconds: number) => Promise<Vector>;

/** A range query's series: labels and `[seconds, value]` points. */
export type Matrix = {
  readonly metric: Readonly<Record<string, string>>;
  readonly points: readonly [number, number][];
}[];

/** Runs a range query over `[from, to]` every `step` seconds. */
export type RangeQuery = (expr: string, fromSeconds: number, toSeconds: number, stepSeconds: number) => Promise<Matrix>;

/** What a failed connection's system error code means, in words. */
const CONNECTION_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: "the connection was refused: nothing listens at that host and port (is the port-forward running?)",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved now (DNS did not answer)",
  ETIMEDOUT: "the connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
  ECONNRESET: "the server closed the connection",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  DEPTH_ZERO_SELF_SIGNED_CERT: "its TLS certificate is self-signed and not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "its TLS certificate is not trusted",
  CERT_HAS_EXPIRED: "its TLS certificate has expired",
  ERR_TLS_CERT_ALTNAME_INVALID: "its TLS certificate is for another host name",
};

/** The cause of a failed `fetch` (Node wraps it as "fetch failed" with the system error as `cause`), in words. */
export function connectionCause(e: unknown): string {
  for (let cur: unknown = e; cur instanceof Error; cur = cur.cause) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string" && CONNECTION_CAUSES[code]) return `${CONNECTION_CAUSES[code]} (${code})`;
    if (cur.cause === undefined) return cur.message;
  }
  return String(e);
}

/** How long one query may take, answer included, and how large its answer may be. */
export interface QueryLimits {
  /** @default 60000 (a minute: Prometheus's own default query timeout is 2 minutes, report windows are small) */
  readonly timeoutMs?: number;
  /** @default 64 MiB (a job's series over its window are a few MiB at most) */
  readonly maxAnswerBytes?: number;
}

const DEFAULT_LIMITS = { timeoutMs: 60_000, maxAnswerBytes: 64 * 1024 * 1024 } as const;

/** Prometheus's JSON API envelope, and the two result shapes we read: instant vectors and range matrices. */
const Envelope = z.object({ status: z.string(), error: z.string().optional(), data: z.unknown().optional() });
const SampleValue = z.tuple([z.number(), z.string()]);
const Labels = z.record(z.string(), z.string());
const VectorResult = z.object({ result: z.array(z.object({ metric: Labels, value: SampleValue })) });
const MatrixResult = z.object({ result: z.array(z.object({ metric: Labels, values: z.array(SampleValue) })) });

/** The body of `response`, read up to `max` bytes; undefined when it is longer. */
async function boundedText(response: Response, max: number): Promise<string | undefined> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Fetches one API answer's text within the limits, or says why there is none. */
async function fetchAnswer(url: string, target: string, limits: Required<QueryLimits>): Promise<[Response, string]> {
  const timedOut = `Prometheus at ${url} did not answer within ${limits.timeoutMs / 1000} s`;
  try {
    const response = await fetch(target, { signal: AbortSignal.timeout(limits.timeoutMs) });
    const text = await boundedText(response, limits.maxAnswerBytes);
    if (text === undefined)
      throw new UsageError(
        `Prometheus at ${url} answered more than ${limits.maxAnswerBytes / 1024 / 1024} MiB for one query; ` +
          `give a shorter window (--from, --to) or a coarser --step`,
      );
    return [response, text];
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) throw new UsageError(timedOut);
    throw new UsageError(`cannot query Prometheus at ${url}: ${connectionCause(e)}`);
  }
}

/** Reads a Prometheus API answer of the given shape, or says why it is not one. */
async function api<T>(
  url: string,
  request: { path: string; params: Record<string, string>; expr: string },
  shape: z.ZodType<T>,
  limits: QueryLimits,
): Promise<T> {
  const target = `${url.replace(/\/+$/, "")}${request.path}?${new URLSearchParams(request.params)}`;
  const [response, text] = await fetchAnswer(url, target, { ...DEFAULT_LIMITS, ...limits });
  const notApi = new UsageError(
    `${url} answered HTTP ${response.status} with something that is not Prometheus's JSON API; give the ` +
      `Prometheus server's base URL (e.g. http://localhost:9090)`,
  );
  let body: z.infer<typeof Envelope>;
  try {
    body = Envelope.parse(JSON.parse(text));
  } catch {
    throw notApi;
  }
  if (body.status !== "success" || body.data === undefined)
    throw new UsageError(`Prometheus at ${url} refused a query (${body.error ?? "no data"}): ${request.expr}`);
  const data = shape.safeParse(body.data);
  if (!data.success) throw notApi;
  return data.data;
}

/** The Prometheus HTTP API's range queries (`/api/v1/query_range`) at `url`. */
export function httpRangeQuery(url: string, limits: QueryLimits = {}): RangeQuery {
  return async (expr, from, to, step) => {
    const params = { query: expr, start: String(from), end: String(to), step: String(step) };
    const { result } = await api(url, { path: "/api/v1/query_range", params, expr }, MatrixResult, limits);
    return result.map((s) => ({
      metric: s.metric,
      points: s.values.map(([t, v]): [number, number] => [t, Number(v)]),
    }));
  };
}

/**
 * The Prometheus HTTP API (`/api/v1/query`) at `url`. Unreachable, refusing, too slow, too large or not Prometheus's
 * JSON, it is a usage error with the reason.
 */
export function httpQuery(url: string, limits: QueryLimits = {}): Query {
  return async (expr, time) => {
    const params = { query: expr, time: String(time) };
    const { result } = await api(url, { path: "/api/v1/query", params, expr }, VectorResult, limits);
    return result.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
  };
}

const sel = (w: JobWindow, extra = "") => `{namespace="${w.namespace}", workload="${w.workload}"${extra}}`;
const range = (w: JobWindow) => `${Math.max(w.stepSeconds, Math.round(w.toSeconds - w.fromSeconds))}s`;
const sub = (w: JobWindow) => `[${range(w)}:${w.stepSeconds}s]`;

/** The queries, by what they measure. */
export function jobQueries(w: JobWindow) {
  const util = `${RECORDED.gpuUtilization}${sel(w)}`;
  const rows = `${METRICS.rayDataOutputRows.name}${sel(w)}`;
  return {
    perWorkerAverage: `avg by (pod) (avg_over_time(${util}[${range(w)}]))`,
    average: `avg(avg_over_time(${util}[${range(w)}]))`,
    perWorkerP10: `quantile_over_time(0.1, (avg by (pod) (${util}))${sub(w)})`,
    p10: `quantile_over_time(0.1, (avg(${util}))${sub(w)})`,
    peakMemoryMiB: `max(max_over_time(${RECORDED.gpuMemoryUsedMiB}${sel(w)}[${range(w)}]))`,
    spilledBytes: `max_over_time((sum(${METRICS.objectStoreMemory.name}${sel(w, ', Location="SPILLED"')}) or vector(0))${sub(w)})`,
    rowsByOperator: `sum by (operator) (max_over_time(${rows}[${range(w)}]) - min_over_time(${rows}[${range(w)}]))`,
    inputWaitSeconds: `sum(increase(${METRICS.inputWaitSeconds.name}${sel(w)}[${range(w)}]))`,
    computeSeconds: `sum(increase(${METRICS.computeSeconds.name}${sel(w)}[${range(w)}]))`,
    samples: `sum(increase(${METRICS.samples.name}${sel(w)}[${range(w)}]))`,
    tokens: `sum(increase(${METRICS.tokens.name}${sel(w)}[${range(w)}]))`,
    // GPUs (and GPU nodes) held at each step, times the step: only while the job held them, whatever the window.
    gpuSeconds: `sum_over_time((count(${util}))${sub(w)}) * ${w.stepSeconds}`,
    nodeSeconds: `sum_over_time((count(count by (pod) (${util})))${sub(w)}) * ${w.stepSeconds}`,
    heldSeconds: `count_over_time((count(${util}))${sub(w)}) * ${w.stepSeconds}`,
  };
}

/** When the job's pods existed in the last `lookbackSeconds` before `nowSeconds`, or undefined if never. */
export async function jobLifetime(
  q: Query,
  namespace: string,
  workload: string,
  nowSeconds: number,
  lookbackSeconds: number,
  stepSeconds: number,
): Promise<{ fromSeconds: number; toSeconds: number } | undefined> {
  // kube-state-metrics' own series, not the recording rule: a sample's timestamp is when it was scraped, and a rule
  // is evaluated at its group's own offset. Ray's pods only (head and workers, gone with the job's cluster): the
  // submitter pod stays after the job, Completed, as long as the RayJob does.
  const pods =
    `${METRICS.podLabels.name}{namespace="${namespace}", ${ksmLabel("ray-gpu.io/workload")}="${workload}", ` +
    `${ksmLabel("ray.io/node-type")}=~"head|worker"}`;
  const window = `[${lookbackSeconds}s:${stepSeconds}s]`;
  const [first, last] = await Promise.all([
    q(`min(min_over_time(timestamp(${pods})${window}))`, nowSeconds),
    q(`max(max_over_time(timestamp(${pods})${window}))`, nowSeconds),
  ]);
  if (!first[0] || !last[0] || !Number.isFinite(first[0].value)) return undefined;
  return { fromSeconds: first[0].value, toSeconds: last[0].value };
}

/** Everything measured about the job in its window. */
export interface Measured {
  readonly perWorker: readonly { readonly pod: string; readonly averagePercent: number; readonly p10Percent: number }[];
  readonly averagePercent: number | undefined;
  readonly p10Percent: number | undefined;
  readonly peakMemoryMiB: number | undefined;
  readonly spilledBytes: number;
  readonly rowsPerSecond: Readonly<Record<string, number>>;
  readonly gpuHours: number;
  readonly nodeHours: number;
  /** From the runtime's telemetry; undefined when the job's image does not publish it. */
  readonly dataWaitFraction: number | undefined;
  readonly samplesPerSecond: number | undefined;
  readonly tokensPerSecond: number | undefined;
}

/** Runs every query at the window's end. */
export async function measureJob(q: Query, w: JobWindow): Promise<Measured> {
  const qs = jobQueries(w);
  const at = (expr: string) => q(expr, w.toSeconds);
  const [perAvg, avg, perP10, p10, peak, spilled, rows, gpuSec, nodeSec, wait, compute, samples, tokens, held] =
    await Promise.all(
      [
        qs.perWorkerAverage,
        qs.average,
        qs.perWorkerP10,
        qs.p10,
        qs.peakMemoryMiB,
        qs.spilledBytes,
        qs.rowsByOperator,
        qs.gpuSeconds,
        qs.nodeSeconds,
        qs.inputWaitSeconds,
        qs.computeSeconds,
        qs.samples,
        qs.tokens,
        qs.heldSeconds,
      ].map(at),
    );

  const one = (v: Vector) => v[0]?.value;
  const p10ByPod = new Map(perP10!.map((s) => [s.metric["pod"] ?? "", s.value]));
  // Throughput is per second the job held its GPUs (not pending, not after it ended).
  const seconds = Math.max(1, one(held!) ?? w.toSeconds - w.fromSeconds);
  return {
    perWorker: perAvg!
      .map((s) => ({
        pod: s.metric["pod"] ?? "",
        averagePercent: s.value,
        p10Percent: p10ByPod.get(s.metric["pod"] ?? "") ?? NaN,
      }))
      .sort((a, b) => byCodePoint(a.pod, b.pod)),
    averagePercent: one(avg!),
    p10Percent: one(p10!),
    peakMemoryMiB: one(peak!),
    spilledBytes: one(spilled!) ?? 0,
    rowsPerSecond: Object.fromEntries(rows!.map((s) => [s.metric["operator"] ?? "", s.value / seconds])),
    gpuHours: (one(gpuSec!) ?? 0) / 3600,
    nodeHours: (one(nodeSec!) ?? 0) / 3600,
    ...telemetry(one(wait!), one(compute!), one(samples!), one(tokens!), seconds),
  };
}

/** The data-wait fraction and throughput from the runtime's counters, or undefined without them. */
function telemetry(
  wait: number | undefined,
  compute: number | undefined,
  samples: number | undefined,
  tokens: number | undefined,
  seconds: number,
) {
  const timed = wait !== undefined && compute !== undefined && wait + compute > 0;
  return {
    dataWaitFraction: timed ? wait / (wait + compute) : undefined,
    samplesPerSecond: samples === undefined ? undefined : samples / seconds,
    tokensPerSecond: tokens === undefined ? undefined : tokens / seconds,
  };
}

/** Each worker's average GPU utilization over the window, about 200 points: the report's timeline. */
export async function utilizationTimeline(rq: RangeQuery, w: JobWindow) {
  const step = Math.max(w.stepSeconds, Math.ceil((w.toSeconds - w.fromSeconds) / 200 / w.stepSeconds) * w.stepSeconds);
  const m = await rq(`avg by (pod) (${RECORDED.gpuUtilization}${sel(w)})`, w.fromSeconds, w.toSeconds, step);
  return {
    stepSeconds: step,
    perWorker: m
      .map((s) => ({
        pod: s.metric["pod"] ?? "",
        points: s.points.map(([t, v]): [number, number] => [t, round3(v)]),
      }))
      .sort((a, b) => byCodePoint(a.pod, b.pod)),
  };
}
