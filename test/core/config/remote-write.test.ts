/**
 * `observability.remoteWrite.url` has a grammar (https, a DNS host name, a port, a path, a query) and never carries a
 * credential: a user or password, or a credential-named query key, would land in the Helm values and Pulumi's state.
 * Such a URL is refused without being echoed.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../../core/config/stack";
import { configProblems, minimalConfig } from "../../helpers/fixtures";

const AMP = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1234abcd-5678/api/v1/remote_write";

/** The minimal stack with `url` as its remote-write URL. */
function withUrl(url: string) {
  const raw = minimalConfig();
  (raw.platform as Record<string, unknown>)["observability"] = { remoteWrite: { url } };
  return raw;
}
const problems = (url: string) => configProblems(withUrl(url));

describe("observability.remoteWrite.url", () => {
  it("accepts an AMP URL and any HTTPS endpoint by host name, port, path and query", () => {
    for (const url of [AMP, "https://metrics.example.com", "https://m.example.com:9443/api/v1/push?tenant=ml-team"])
      expect(parseStackConfig(withUrl(url)).platform.observability.remoteWrite?.url, url).toBe(url);
  });

  it("refuses a user, a password or a credential in the query, without echoing the URL", () => {
    for (const url of [
      "https://user:Canary-pass@metrics.example.com/api/v1/push",
      "https://Canary-user@metrics.example.com/push",
      "https://metrics.example.com/push?token=Canary123",
      "https://metrics.example.com/push?tenant=a&api_key=Canary123",
      "https://metrics.example.com/push?X-Amz-Signature=Canary123",
    ]) {
      const text = problems(url);
      expect(text, url).toMatch(
        /observability\.remoteWrite\.url: carries a (user or password|credential in its query)/,
      );
      expect(text, url).not.toContain("Canary");
    }
  });

  it("refuses every other shape with the grammar it must have", () => {
    for (const url of [
      "http://metrics.example.com/push",
      "https://localhost/push",
      "https://metrics.example.com/push#frag",
      "https://metrics.example.com/a b",
      "https://-bad.example.com/",
      "https:///push",
      "ftp://metrics.example.com",
    ])
      expect(problems(url), url).toContain("must be https://<DNS host name>[:port][/path][?query]");
  });
});
