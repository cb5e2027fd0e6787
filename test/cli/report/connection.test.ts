/** `ray-gpu report` against a Prometheus it cannot use: the cause in words, never Node's bare "fetch failed". */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { connectionCause, httpQuery, httpRangeQuery, prometheusBaseUrl } from "../../../cli/report/prometheus-http";

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("report: a Prometheus it cannot use", () => {
  it("takes only an http or https base URL without a password, naming the value and the form to give", () => {
    expect(prometheusBaseUrl("http://127.0.0.1:9090")).toBe("http://127.0.0.1:9090");
    expect(prometheusBaseUrl("https://prom.example.com/prometheus")).toBe("https://prom.example.com/prometheus");
    const form = "give the server's base URL, e.g. http://localhost:9090";
    expect(() => prometheusBaseUrl("127.0.0.1:9090")).toThrow(`--prometheus "127.0.0.1:9090" is not a URL; ${form}`);
    expect(() => prometheusBaseUrl("localhost")).toThrow(`--prometheus "localhost" is not a URL; ${form}`);
    expect(() => prometheusBaseUrl("localhost:9090")).toThrow(`"localhost:9090" is not an http or https URL; ${form}`);
    expect(() => prometheusBaseUrl("ftp://h/")).toThrow("is not an http or https URL");
    const secret = () => prometheusBaseUrl("http://admin:hunter2@prom:9090");
    expect(secret).toThrow("carries a user or password");
    expect(secret).not.toThrow(/hunter2/);
    // refused for another reason, the value is still shown without its user and password
    for (const [raw, shown] of [
      ["http://admin:hunter2@prom:99999", "http://***@prom:99999"],
      ["admin:hunter2@prom:9090", "***@prom:9090"],
      ["ftp://admin:hunter2@prom/", "ftp://***@prom/"],
    ]) {
      expect(() => prometheusBaseUrl(raw!)).toThrow(`--prometheus "${shown}" is not`);
      expect(() => prometheusBaseUrl(raw!)).not.toThrow(/hunter2/);
    }
  });

  it("shows the server's own words with their control characters escaped", async () => {
    const error = "bad query\\u001b[2J\\r\\u009b"; // JSON escapes: the server sends the controls
    await answering(`{"status": "error", "error": "${error}"}`, (url) =>
      expect(httpQuery(url)("up", 0)).rejects.toThrow(
        `Prometheus at ${url} refused a query (bad query\\x1b[2J\\x0d\\x9b): up`,
      ),
    );
  });

  it("says the connection was refused when nothing listens at the port", async () => {
    const server = createServer();
    const port = await listen(server);
    await close(server);
    await expect(httpQuery(`http://127.0.0.1:${port}`)("up", 0)).rejects.toThrow(
      new RegExp(
        `cannot query Prometheus at http://127\\.0\\.0\\.1:${port}: the connection was refused: .*\\(ECONNREFUSED\\)$`,
      ),
    );
  });

  it("says when the server answers with something that is not Prometheus's API", async () => {
    const server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html></html>"));
    const port = await listen(server);
    try {
      await expect(httpQuery(`http://127.0.0.1:${port}`)("up", 0)).rejects.toThrow(
        /answered HTTP 200 with something that is not Prometheus's JSON API; give the Prometheus server's base URL/,
      );
    } finally {
      await close(server);
    }
  });

  /** A server that answers every request with `body` (JSON unless a string), for one test. */
  async function answering(body: unknown, run: (url: string) => Promise<void>) {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    const server = createServer((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(text));
    const port = await listen(server);
    try {
      await run(`http://127.0.0.1:${port}`);
    } finally {
      await close(server);
    }
  }

  it("refuses answers shaped wrong for the query as not Prometheus's API (they crashed with a TypeError)", async () => {
    for (const data of [
      { resultType: "vector", result: 5 },
      { resultType: "vector", result: [{}] },
      { resultType: "vector", result: [{ metric: {}, value: ["x", "1"] }] },
      { resultType: "vector", result: [{ metric: { a: 1 }, value: [1, "1"] }] },
      null,
    ])
      await answering({ status: "success", data }, (url) =>
        expect(httpQuery(url)("up", 0), JSON.stringify(data)).rejects.toThrow(/is not Prometheus's JSON API/),
      );
    await answering({ status: "success", data: { resultType: "matrix", result: [{ metric: {} }] } }, (url) =>
      expect(httpRangeQuery(url)("up", 0, 60, 15)).rejects.toThrow(/is not Prometheus's JSON API/),
    );
  });

  it("stops waiting for a server that never answers, and says so (the wait is the limit given)", async () => {
    const server = createServer(() => undefined);
    const port = await listen(server);
    try {
      await expect(httpQuery(`http://127.0.0.1:${port}`, { timeoutMs: 200 })("up", 0)).rejects.toThrow(
        new RegExp(`^Prometheus at http://127\\.0\\.0\\.1:${port} did not answer within 0\\.2 s$`),
      );
    } finally {
      server.closeAllConnections();
      await close(server);
    }
  });

  it("stops reading an answer larger than the cap, and says what to narrow", async () => {
    const big = { status: "success", data: { resultType: "vector", result: [] }, pad: "x".repeat(2 * 1024 * 1024) };
    await answering(big, (url) =>
      expect(httpQuery(url, { maxAnswerBytes: 1024 * 1024 })("up", 0)).rejects.toThrow(
        /answered more than 1 MiB for one query; give a shorter window/,
      ),
    );
  });

  it("names a system error found anywhere in the cause chain, and falls back to the innermost message", () => {
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND prom.example"), { code: "ENOTFOUND" });
    expect(connectionCause(new TypeError("fetch failed", { cause: dns }))).toBe(
      "the host name does not resolve (ENOTFOUND)",
    );
    expect(connectionCause(new TypeError("fetch failed", { cause: new Error("bad port") }))).toBe("bad port");
  });
});
