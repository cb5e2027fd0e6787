/**
 * A recording of the Prometheus answers one `ray-gpu report` read: `--save-recording <file>` writes every request the
 * report made with the `data` Prometheus answered (raw, as the API returned it), and `--recording <file>` answers the
 * report's requests from it instead of a server, so a job's measurements can be attached to an issue, reviewed later,
 * or the report tried without a cluster (examples/report/). Replayed answers go through the very same shapes and number
 * parsing as live ones (./prometheus-api). The file is a versioned JSON document, byte-stable (keys sorted, requests
 * in one order), read with a strict schema.
 */
import { z } from "zod";
import { toConfigIssues, joinPath } from "../../core/config/zod-issues";
import { ConfigError } from "../../core/errors";
import { byCodePoint, sortKeys, stableJson } from "../../core/serialize";
import { readInputFile } from "../input/file";
import type { OwnedFormat } from "../output/file";
import { printable } from "../output/terminal-text";
import { UsageError } from "../io";
import { API_PATHS, describeRequest, type ApiRequest, type Transport } from "./prometheus-api";

/** The document's kind and version: a reader refuses any other. */
export const RECORDING_KIND = "ray-gpu.io/prometheus-recording";
export const RECORDING_VERSION = 1;

/** What a recording says of itself when `--save-recording` wrote it (the sample's recorder says more). */
export const SAVED_SOURCE = "answers of a Prometheus server, saved by ray-gpu report --save-recording";

const LOOKBACK = /^\d+[dhm]$/;

/** One request and Prometheus's answer `data` to it. */
const RecordedAnswerSchema = z.strictObject({
  path: z.enum(API_PATHS),
  params: z.record(z.string(), z.string()),
  /** Checked when replayed, by the same shapes as a live answer. */
  data: z.unknown(),
});

/** A recording: what it is, where its answers come from, the report's flags, and the answers. */
const RecordingSchema = z
  .strictObject({
    kind: z.literal(RECORDING_KIND),
    version: z.literal(RECORDING_VERSION),
    /** Where the answers come from, in words: a live server, or the synthetic series of the shipped sample. */
    source: z.string().min(1),
    stack: z.string().min(1),
    job: z.string().min(1),
    /** `--from` when the report was given one (else the job's lifetime was looked up). */
    fromSeconds: z.number().nonnegative().optional(),
    toSeconds: z.number().nonnegative(),
    lookback: z.string().regex(LOOKBACK, "give a duration such as 7d, 12h or 90m"),
    answers: z.array(RecordedAnswerSchema),
  })
  .superRefine((rec, ctx) => {
    if (rec.fromSeconds !== undefined && rec.fromSeconds >= rec.toSeconds)
      ctx.addIssue({ code: "custom", path: ["fromSeconds"], message: "must be before toSeconds" });
    const seen = new Map<string, number>();
    rec.answers.forEach((a, i) => {
      const first = seen.get(keyOf(a));
      if (first !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["answers", i],
          message: `answers the same request as answers[${first}]`,
        });
      else seen.set(keyOf(a), i);
    });
  });

/**
 * A recording, read and checked: {@link RecordingSchema}'s type, written out so the declarations need no zod (checked
 * against the schema at compile time, below).
 */
export interface Recording {
  readonly kind: typeof RECORDING_KIND;
  readonly version: typeof RECORDING_VERSION;
  readonly source: string;
  readonly stack: string;
  readonly job: string;
  readonly fromSeconds?: number | undefined;
  readonly toSeconds: number;
  readonly lookback: string;
  readonly answers: {
    readonly path: (typeof API_PATHS)[number];
    readonly params: Record<string, string>;
    readonly data: unknown;
  }[];
}

/** Compile-time proof that {@link Recording} is what the schema reads, both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const recordingTypeAgrees: Same<Readonly<z.infer<typeof RecordingSchema>>, Recording> extends true ? true : never =
  true;
void recordingTypeAgrees;

/** What a recording says about the report it was made with. */
export type RecordingMeta = Pick<Recording, "source" | "stack" | "job" | "fromSeconds" | "toSeconds" | "lookback">;

/** One request's identity: its endpoint and its parameters, whatever their order. */
function keyOf(r: ApiRequest): string {
  return JSON.stringify([r.path, Object.entries(r.params).sort(([a], [b]) => byCodePoint(a, b))]);
}

/** The report flags a recording was made with, to give again to replay it. */
export function recordedFlags(rec: RecordingMeta): string {
  const from = rec.fromSeconds === undefined ? "" : ` --from ${rec.fromSeconds}`;
  return printable(`--stack ${rec.stack} --job ${rec.job}${from} --to ${rec.toSeconds} --lookback ${rec.lookback}`);
}

/**
 * `data` with its `result` series in one order (by their labels), else as it is: Prometheus does not order the series
 * of an instant vector (the same query answers them in another order from one run to the next), and a vector's order
 * means nothing, so a recording of the same answers is the same bytes.
 */
function inSeriesOrder(data: unknown): unknown {
  const result = (data as { result?: unknown } | null)?.result;
  if (!Array.isArray(result)) return data;
  const labels = (s: unknown) => JSON.stringify(sortKeys((s as { metric?: unknown } | null)?.metric ?? null)) ?? "";
  const sorted = result.map((s) => [labels(s), s] as const).sort(([a], [b]) => byCodePoint(a, b));
  return { ...(data as object), result: sorted.map(([, s]) => s) };
}

/**
 * Wraps `inner` so that every answer it gives is kept: `answers()` lists each request once, in one order (by
 * endpoint, then parameters), whatever order the report asked them in, each answer's series in one order.
 */
export function recorder(inner: Transport): { transport: Transport; answers: () => Recording["answers"] } {
  const kept = new Map<string, Recording["answers"][number]>();
  const transport: Transport = {
    name: inner.name,
    async answer(request) {
      const answer = await inner.answer(request);
      kept.set(keyOf(request), { path: request.path, params: { ...request.params }, data: inSeriesOrder(answer.data) });
      return answer;
    },
  };
  const answers = () => [...kept.entries()].sort(([a], [b]) => byCodePoint(a, b)).map(([, answer]) => answer);
  return { transport, answers };
}

/** The recording's text: byte-stable for the same answers. */
export function recordingText(meta: RecordingMeta, answers: Recording["answers"]): string {
  return stableJson({ kind: RECORDING_KIND, version: RECORDING_VERSION, ...meta, answers });
}

/** The recording in `text`, or undefined when it is not one. */
function parsed(text: string): Recording | undefined {
  try {
    const result = RecordingSchema.safeParse(JSON.parse(text));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}

/** The files `--save-recording` writes: only a recording (one that reads back) is ever replaced. */
export const RECORDING_FILE: OwnedFormat = {
  what: "a recording ray-gpu wrote",
  owns: (text) => parsed(text) !== undefined,
};

/**
 * The recording at `file`, named `path` in messages (as the user gave it).
 * @throws UsageError when it cannot be read or is not JSON; ConfigError listing every problem with its JSON path
 */
export function readRecording(file: string, path = file): Recording {
  const text = readInputFile(file, "recording");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`recording ${path} is not JSON: ${printable(e instanceof Error ? e.message : String(e))}`);
  }
  const result = RecordingSchema.safeParse(raw);
  if (result.success) return result.data;
  const label = (p: Parameters<typeof joinPath>[0]) => printable(`${path}: ${joinPath(p) || "(root)"}`);
  // A key or a string of the file may hold control characters: shown as escapes, as everything read from elsewhere.
  const issues = toConfigIssues(result.error, RecordingSchema, raw, label).map((i) => ({
    ...i,
    message: printable(i.message),
    ...(typeof i.value === "string" ? { value: printable(i.value) } : {}),
  }));
  throw new ConfigError(issues, path);
}

/**
 * Answers from the recording `rec` read from `file`. A request it holds no answer to is a usage error naming the
 * request and the flags the recording was made with (give the same to replay it).
 */
export function replayTransport(rec: Recording, file: string): Transport {
  const byKey = new Map(rec.answers.map((a) => [keyOf(a), a]));
  const name = `recording ${file}`;
  return {
    name,
    async answer(request) {
      const hit = byKey.get(keyOf(request));
      if (!hit)
        throw new UsageError(
          `${name} has no answer to the query ${describeRequest(request)}: it was recorded with ` +
            `${recordedFlags(rec)}; give the same to replay it, or record this report from a live server with ` +
            `--prometheus <url> --save-recording <file>`,
        );
      const notApi =
        `${name}: the answer to the query ${describeRequest(request)} is not in the shape of Prometheus's JSON ` +
        `API; record it again with --save-recording`;
      return { data: hit.data, notApi };
    },
  };
}
