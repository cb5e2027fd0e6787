/**
 * The Prometheus HTTP API as `ray-gpu report` uses it: a {@link Transport} whose every request is bounded in time and
 * size, and every failure a usage error that says why (a refused connection, a server that is not Prometheus, an
 * answer too slow or too large, a query it refused). The answers' shapes and values are read in ./prometheus-api.
 */
import { z } from "zod";
import { printable } from "../output/terminal-text";
import { UsageError } from "../io";
import { instantQuery, rangeQuery, type Query, type RangeQuery, type Transport } from "./prometheus-api";

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
          `give a shorter window (--from, --to)`,
      );
    return [response, text];
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError")) throw new UsageError(timedOut);
    throw new UsageError(`cannot query Prometheus at ${url}: ${printable(connectionCause(e))}`);
  }
}

/** The userinfo (`user:password@`) of a URL-like text, masked: what a message may show of a refused `--prometheus`. */
const withoutUserinfo = (raw: string) => raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^/?#]*@/i, "$1***@");

/**
 * The Prometheus base URL `--prometheus` gives, checked before any query: an `http:` or `https:` URL with a host and
 * without a user or password (which would be echoed in messages, and which no message shows: a refused value is
 * shown with its `user:password@` masked). `localhost:9090` (no scheme) parses as a URL of scheme `localhost:`, so the
 * scheme is checked by name.
 * @throws UsageError naming the value and the form to give.
 */
export function prometheusBaseUrl(raw: string): string {
  const example = "give the server's base URL, e.g. http://localhost:9090 (kubectl port-forward)";
  const shown = printable(JSON.stringify(withoutUserinfo(raw).slice(0, 200)));
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--prometheus ${shown} is not a URL; ${example}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new UsageError(`--prometheus ${shown} is not an http or https URL; ${example}`);
  if (url.username !== "" || url.password !== "")
    throw new UsageError(
      `--prometheus carries a user or password in the URL, which would be printed in messages; ${example}`,
    );
  return raw;
}

/** Prometheus's JSON API envelope: the answer's `data` is read by ./prometheus-api. */
const Envelope = z.object({ status: z.string(), error: z.string().optional(), data: z.unknown().optional() });

/**
 * The Prometheus HTTP API at `url` (a base URL {@link prometheusBaseUrl} accepted). Unreachable, refusing, too slow,
 * too large or not Prometheus's JSON, it is a usage error with the reason; the server's own words are made printable.
 */
export function httpTransport(url: string, limits: QueryLimits = {}): Transport {
  const name = `Prometheus at ${url}`;
  return {
    name,
    async answer(request) {
      const target = `${url.replace(/\/+$/, "")}${request.path}?${new URLSearchParams(request.params)}`;
      const [response, text] = await fetchAnswer(url, target, { ...DEFAULT_LIMITS, ...limits });
      const notApi =
        `${url} answered HTTP ${response.status} with something that is not Prometheus's JSON API; give the ` +
        `Prometheus server's base URL (e.g. http://localhost:9090)`;
      let body: z.infer<typeof Envelope>;
      try {
        body = Envelope.parse(JSON.parse(text));
      } catch {
        throw new UsageError(notApi);
      }
      if (body.status !== "success" || body.data === undefined)
        throw new UsageError(
          `${name} refused a query (${printable(body.error ?? "no data")}): ${request.params["query"]}`,
        );
      return { data: body.data, notApi };
    },
  };
}

/** Instant queries (`/api/v1/query`) of the Prometheus HTTP API at `url`. */
export const httpQuery = (url: string, limits: QueryLimits = {}): Query => instantQuery(httpTransport(url, limits));

/** Range queries (`/api/v1/query_range`) of the Prometheus HTTP API at `url`. */
export const httpRangeQuery = (url: string, limits: QueryLimits = {}): RangeQuery =>
  rangeQuery(httpTransport(url, limits));
