/** The API endpoint's ranges: a range the public endpoint never sees a request from is refused in every environment. */
import { describe, expect, it } from "vitest";
import { apiEndpointNote, NO_PUBLIC_SOURCE, unroutableEntries } from "../../../core/config/api-endpoint";
import { configProblems, minimalConfig, repoStack } from "../../helpers/fixtures";

/** The problems of the minimal (dev) config with these public access ranges. */
function withRanges(cidrs: string[], environment = "dev"): string {
  const raw = minimalConfig();
  raw.environment = environment;
  raw.platform.cluster = { mode: "create", name: "t", publicAccessCidrs: cidrs };
  return configProblems(raw);
}

describe("public access ranges the EKS endpoint never sees", () => {
  it("refuses the shipped prod stack's old documentation range in dev too, naming it and the fix", () => {
    expect(withRanges(["44.192.0.0/24", "203.0.113.0/24"])).toBe(
      "Pulumi.test.yaml: 1 problem\n" +
        "  ✖ ray-gpu:platform.cluster.publicAccessCidrs[1]: lies in 203.0.113.0/24, a documentation range (RFC 5737 " +
        "TEST-NET-3): the public API endpoint only ever sees public source addresses, so this range admits nobody, " +
        "and pulumi up would create the cluster, then fail on its first Kubernetes object (~15 min in); list the " +
        "public ranges you deploy from (your VPN's or office's egress, your CI runners'; curl " +
        "https://checkip.amazonaws.com shows yours), or set publicEndpoint: false and deploy from inside the VPC " +
        '(got "203.0.113.0/24")',
    );
  });

  it.each([
    ["192.0.2.0/24", "TEST-NET-1"],
    ["198.51.100.0/25", "TEST-NET-2"],
    ["10.20.0.0/16", "private use (RFC 1918)"],
    ["172.16.0.0/12", "private use (RFC 1918)"],
    ["192.168.1.10/32", "private use (RFC 1918)"],
    ["100.64.0.0/10", "shared address space (RFC 6598)"],
    ["127.0.0.1/32", "loopback"],
    ["169.254.0.0/16", "link-local"],
    ["0.0.0.0/8", '"this network"'],
    ["224.0.0.0/3", "multicast"],
    ["198.18.0.0/15", "benchmarking"],
  ])("refuses %s (%s) in prod as in dev", (cidr, name) => {
    for (const env of ["dev", "prod"]) expect(withRanges([cidr], env)).toContain(name);
  });

  it("judges ranges as address sets: one holding any public address passes", () => {
    expect(unroutableEntries(["192.0.0.0/16", "203.0.112.0/23", "0.0.0.0/0"])).toEqual([]);
    // A range spanning two unroutable blocks names both.
    expect(unroutableEntries(["224.0.0.0/3"])[0]!.within).toEqual([
      "224.0.0.0/4, multicast",
      "240.0.0.0/4, reserved for future use",
    ]);
    expect(NO_PUBLIC_SOURCE.map((r) => r.cidr)).toEqual(
      expect.arrayContaining(["192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"]),
    );
  });

  it("ships prod with a private endpoint, and says how pulumi up reaches it", () => {
    const cluster = repoStack("prod").platform.cluster;
    expect(cluster).toMatchObject({ mode: "create", publicEndpoint: false });
    expect(apiEndpointNote(cluster)).toMatch(/^private only: .* set publicEndpoint: true and publicAccessCidrs/);
    expect(apiEndpointNote({ mode: "create", publicEndpoint: true, publicAccessCidrs: ["44.192.0.0/24"] })).toBe(
      "public, from 44.192.0.0/24 (and private inside the VPC): run pulumi up from one of those ranges",
    );
    expect(apiEndpointNote({ mode: "existing" })).toBeUndefined();
  });
});
