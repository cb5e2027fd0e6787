/**
 * What `ray-gpu report` asks Prometheus about one job, over one window: GPU utilization (average and 10th percentile,
 * per worker and overall), peak GPU memory, bytes spilled, Ray Data throughput, and the GPU- and node-seconds the job
 * held. Every query reads the recording rules the stack installs (core/observability/rules) or the exporters' own
 * metrics; the tests run them on a real Prometheus. Every value read is checked against its quantity's range (a
 * utilization from 0 to 100%, amounts never negative): outside it is a usage error naming the query, never a verdict.
 */
import { ksmLabel, METRICS, RECORDED } from "../../core/observability/metrics";
import { round3 } from "../../core/quantity";
import { byCodePoint } from "../../core/serialize";
import { UsageError } from "../io";
import { seriesText, type Query, type RangeQuery, type Vector } from "./prometheus-api";

/** One job over one window: `[fromSeconds, toSeconds]`, sampled every `stepSeconds` for the percentiles. */
export interface JobWindow {
  readonly namespace: string;
  readonly workload: string;
  readonly fromSeconds: number;
  readonly toSeconds: number;
  readonly stepSeconds: number;
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

/** What a measure's values are; each kind has its range. */
type Quantity = "percent" | "amount";

/** The range of each kind of value, and how a message names it. */
const QUANTITIES: Readonly<Record<Quantity, { readonly max: number; readonly what: string }>> = {
  percent: { max: 100, what: "a GPU utilization, from 0 to 100%" },
  amount: { max: Infinity, what: "an amount (MiB, bytes, seconds, rows, samples or a time), never negative" },
};

/** The kind of each query's values. */
const QUANTITY_OF: { readonly [K in keyof ReturnType<typeof jobQueries>]: Quantity } = {
  perWorkerAverage: "percent",
  average: "percent",
  perWorkerP10: "percent",
  p10: "percent",
  peakMemoryMiB: "amount",
  spilledBytes: "amount",
  rowsByOperator: "amount",
  inputWaitSeconds: "amount",
  computeSeconds: "amount",
  samples: "amount",
  tokens: "amount",
  gpuSeconds: "amount",
  nodeSeconds: "amount",
  heldSeconds: "amount",
};

/**
 * `value` when it lies in the range of `quantity`; else a usage error naming the query, the series and the value (a
 * negative utilization or byte count is a broken exporter or rule, not a measurement).
 */
function inRange(value: number, quantity: Quantity, expr: string, metric: Readonly<Record<string, string>>): number {
  const { max, what } = QUANTITIES[quantity];
  if (value >= 0 && value <= max) return value;
  throw new UsageError(
    `the answer to the query ${expr} holds ${value} for ${seriesText(metric)}, and it is ${what}: the report ` +
      `gives no verdict on it; check the job's exporters and the stack's recording rules`,
  );
}

/** The instant query's answer, every value checked against `quantity`'s range. */
async function measure(q: Query, expr: string, timeSeconds: number, quantity: Quantity): Promise<Vector> {
  const v = await q(expr, timeSeconds);
  return v.map((s) => ({ metric: s.metric, value: inRange(s.value, quantity, expr, s.metric) }));
}

/** Where {@link jobLifetime} looks for a job's pods: its namespace and name, back from `nowSeconds`. */
export interface LifetimeSearch {
  readonly namespace: string;
  readonly workload: string;
  readonly nowSeconds: number;
  readonly lookbackSeconds: number;
  readonly stepSeconds: number;
}

/**
 * When the job's pods existed in the last `lookbackSeconds` before `nowSeconds`, or undefined if never.
 * @throws UsageError for a time that is negative, or a first sighting after the last
 */
export async function jobLifetime(
  q: Query,
  { namespace, workload, nowSeconds, lookbackSeconds, stepSeconds }: LifetimeSearch,
): Promise<{ fromSeconds: number; toSeconds: number } | undefined> {
  // kube-state-metrics' own series, not the recording rule: a sample's timestamp is when it was scraped, and a rule
  // is evaluated at its group's own offset. Ray's pods only (head and workers, gone with the job's cluster): the
  // submitter pod stays after the job, Completed, as long as the RayJob does.
  const pods =
    `${METRICS.podLabels.name}{namespace="${namespace}", ${ksmLabel("ray-gpu.io/workload")}="${workload}", ` +
    `${ksmLabel("ray.io/node-type")}=~"head|worker"}`;
  const window = `[${lookbackSeconds}s:${stepSeconds}s]`;
  const firstSeen = `min(min_over_time(timestamp(${pods})${window}))`;
  const [first, last] = await Promise.all([
    measure(q, firstSeen, nowSeconds, "amount"),
    measure(q, `max(max_over_time(timestamp(${pods})${window}))`, nowSeconds, "amount"),
  ]);
  if (!first[0] || !last[0]) return undefined;
  if (first[0].value > last[0].value)
    throw new UsageError(
      `the job's pods were first seen at ${first[0].value}, after they were last seen (${last[0].value}): the ` +
        `answers to ${firstSeen} and its max contradict each other`,
    );
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

/** The queries of {@link jobQueries}, each one's answer under its own name. */
type Answers = { readonly [K in keyof ReturnType<typeof jobQueries>]: Vector };

/** Runs every query at `timeSeconds`, at once, each answer checked; each is looked up by the query's name. */
async function askAll(q: Query, queries: ReturnType<typeof jobQueries>, timeSeconds: number): Promise<Answers> {
  const names = Object.keys(queries) as (keyof Answers)[];
  const answers = await Promise.all(names.map((name) => measure(q, queries[name], timeSeconds, QUANTITY_OF[name])));
  return Object.fromEntries(names.map((name, i) => [name, answers[i]!])) as unknown as Answers;
}

/** The first sample's value, or undefined when the answer is empty. */
const one = (v: Vector) => v[0]?.value;

/** Each worker's average and 10th percentile, by pod name. */
function perWorker(a: Answers): Measured["perWorker"] {
  const p10ByPod = new Map(a.perWorkerP10.map((s) => [s.metric["pod"] ?? "", s.value]));
  return a.perWorkerAverage
    .map((s) => ({
      pod: s.metric["pod"] ?? "",
      averagePercent: s.value,
      p10Percent: p10ByPod.get(s.metric["pod"] ?? "") ?? NaN,
    }))
    .sort((x, y) => byCodePoint(x.pod, y.pod));
}

/** Runs every query at the window's end. */
export async function measureJob(q: Query, w: JobWindow): Promise<Measured> {
  const a = await askAll(q, jobQueries(w), w.toSeconds);
  // Throughput is per second the job held its GPUs (not pending, not after it ended).
  const seconds = Math.max(1, one(a.heldSeconds) ?? w.toSeconds - w.fromSeconds);
  return {
    perWorker: perWorker(a),
    averagePercent: one(a.average),
    p10Percent: one(a.p10),
    peakMemoryMiB: one(a.peakMemoryMiB),
    spilledBytes: one(a.spilledBytes) ?? 0,
    rowsPerSecond: Object.fromEntries(a.rowsByOperator.map((s) => [s.metric["operator"] ?? "", s.value / seconds])),
    gpuHours: (one(a.gpuSeconds) ?? 0) / 3600,
    nodeHours: (one(a.nodeSeconds) ?? 0) / 3600,
    ...telemetry(a, seconds),
  };
}

/** The data-wait fraction and throughput from the runtime's counters, or undefined without them. */
function telemetry(a: Answers, seconds: number) {
  const wait = one(a.inputWaitSeconds);
  const compute = one(a.computeSeconds);
  const samples = one(a.samples);
  const tokens = one(a.tokens);
  const timed = wait !== undefined && compute !== undefined && wait + compute > 0;
  return {
    dataWaitFraction: timed ? wait / (wait + compute) : undefined,
    samplesPerSecond: samples === undefined ? undefined : samples / seconds,
    tokensPerSecond: tokens === undefined ? undefined : tokens / seconds,
  };
}

/**
 * Each worker's average GPU utilization over the window, about 200 points: the report's timeline. A point outside
 * 0-100% is a usage error naming the query, as for the instant queries.
 */
export async function utilizationTimeline(rq: RangeQuery, w: JobWindow) {
  const step = Math.max(w.stepSeconds, Math.ceil((w.toSeconds - w.fromSeconds) / 200 / w.stepSeconds) * w.stepSeconds);
  const expr = `avg by (pod) (${RECORDED.gpuUtilization}${sel(w)})`;
  const m = await rq(expr, w.fromSeconds, w.toSeconds, step);
  return {
    stepSeconds: step,
    perWorker: m
      .map((s) => ({
        pod: s.metric["pod"] ?? "",
        points: s.points.map(([t, v]): [number, number] => [t, round3(inRange(v, "percent", expr, s.metric))]),
      }))
      .sort((a, b) => byCodePoint(a.pod, b.pod)),
  };
}
