/** `ray-gpu report` against a Prometheus it cannot use: the cause in words, never Node's bare "fetch failed". */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { connectionCause, httpQuery } from "../../cli/report/prometheus";

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("report: a Prometheus it cannot use", () => {
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

  it("names a system error found anywhere in the cause chain, and falls back to the innermost message", () => {
    const dns = Object.assign(new Error("getaddrinfo ENOTFOUND prom.example"), { code: "ENOTFOUND" });
    expect(connectionCause(new TypeError("fetch failed", { cause: dns }))).toBe(
      "the host name does not resolve (ENOTFOUND)",
    );
    expect(connectionCause(new TypeError("fetch failed", { cause: new Error("bad port") }))).toBe("bad port");
  });
});
