/**
 * Prometheus's query API as `ray-gpu report` reads it, whatever answers: instant and range queries go to a
 * {@link Transport} (the HTTP API of a live server, ./prometheus-http, or a recording of one, ./recording), which
 * gives back the answer's `data` as the API returned it; here it is checked against the API's JSON shapes and every
 * sample value is read as a finite number. The same code reads a live answer and a recorded one.
 */
import { z } from "zod";
import { printable } from "../output/terminal-text";
import { UsageError } from "../io";

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

/** The two API endpoints the report asks. */
export const API_PATHS = ["/api/v1/query", "/api/v1/query_range"] as const;

/** One API request: the endpoint and its parameters (`query`, `time` or `start`/`end`/`step`). */
export interface ApiRequest {
  readonly path: (typeof API_PATHS)[number];
  readonly params: Readonly<Record<string, string>>;
}

/** A successful answer's `data`, unread, and what to say when it is not in the shape asked for. */
export interface ApiAnswer {
  readonly data: unknown;
  readonly notApi: string;
}

/** Where answers come from: a live server or a recording. */
export interface Transport {
  /** How messages name it: `Prometheus at http://localhost:9090`, `recording prod.recording.json`. */
  readonly name: string;
  /** @throws UsageError when there is no answer (unreachable, refused, not recorded), with the reason */
  answer(request: ApiRequest): Promise<ApiAnswer>;
}

/** A request in words, for messages: the query and its time or range. */
export function describeRequest({ path, params }: ApiRequest): string {
  const p = params;
  return path === "/api/v1/query"
    ? `${p["query"]} at ${p["time"]}`
    : `${p["query"]} from ${p["start"]} to ${p["end"]} every ${p["step"]} s`;
}

/** The two result shapes we read: instant vectors and range matrices (values are strings, as the API gives them). */
const SampleValue = z.tuple([z.number(), z.string()]);
const Labels = z.record(z.string(), z.string());
const VectorResult = z.object({ result: z.array(z.object({ metric: Labels, value: SampleValue })) });
const MatrixResult = z.object({ result: z.array(z.object({ metric: Labels, values: z.array(SampleValue) })) });

/** Reads an answer of the given shape, or says why it is not one. */
async function api<T>(t: Transport, request: ApiRequest, shape: z.ZodType<T>): Promise<T> {
  const { data, notApi } = await t.answer(request);
  const parsed = shape.safeParse(data);
  if (!parsed.success) throw new UsageError(notApi);
  return parsed.data;
}

/** A series' labels as PromQL writes them, printable and short, for messages. */
export function seriesText(metric: Readonly<Record<string, string>>): string {
  const text = `{${Object.entries(metric)
    .map(([k, v]) => `${k}="${v}"`)
    .join(", ")}}`;
  return printable(text.length > 160 ? `${text.slice(0, 157)}...` : text);
}

/**
 * A sample value as Prometheus writes it (Go's strconv.FormatFloat: `94.875`, `1e+09`, or `NaN`, `+Inf`, `-Inf`).
 * `Number` alone would read "" and " " as 0 and "0x10" as 16.
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Where a value was read, for the message when it is not a finite number. */
interface ValueSource {
  readonly transport: Transport;
  readonly expr: string;
  readonly metric: Readonly<Record<string, string>>;
}

/**
 * The finite number `text` is. NaN (Prometheus's average of nothing), ±Inf and anything that is not a number are a
 * usage error naming the query, the series and the value: the report never gives a verdict on them.
 */
export function finiteValue(text: string, { transport, expr, metric }: ValueSource): number {
  const n = DECIMAL.test(text) ? Number(text) : NaN;
  if (Number.isFinite(n)) return n;
  const shown = printable(JSON.stringify(text.length > 40 ? `${text.slice(0, 37)}...` : text));
  throw new UsageError(
    `${transport.name} answered ${shown} for ${seriesText(metric)} to the query ${expr}: not a finite number, so ` +
      `the report gives no verdict on it; check the job's exporters and the stack's recording rules`,
  );
}

/** Instant queries (`/api/v1/query`) through `t`; every value a finite number. */
export function instantQuery(t: Transport): Query {
  return async (expr, time) => {
    const params = { query: expr, time: String(time) };
    const { result } = await api(t, { path: "/api/v1/query", params }, VectorResult);
    return result.map((s) => ({
      metric: s.metric,
      value: finiteValue(s.value[1], { transport: t, expr, metric: s.metric }),
    }));
  };
}

/** Range queries (`/api/v1/query_range`) through `t`; every value a finite number. */
export function rangeQuery(t: Transport): RangeQuery {
  return async (expr, from, to, step) => {
    const params = { query: expr, start: String(from), end: String(to), step: String(step) };
    const { result } = await api(t, { path: "/api/v1/query_range", params }, MatrixResult);
    return result.map((s) => ({
      metric: s.metric,
      points: s.values.map(([time, v]): [number, number] => [
        time,
        finiteValue(v, { transport: t, expr, metric: s.metric }),
      ]),
    }));
  };
}
