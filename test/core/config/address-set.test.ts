/**
 * Address ranges judged as sets, not spellings: every way of writing "the whole internet" is refused for a prod API
 * endpoint, the metadata address stays out of every egress range that holds it, and a VPC stays out of ranges no
 * host can use. Examples from the adversarial trial, then a property over random splits of the address space.
 */
import { describe, expect, it } from "vitest";
import { addressCount, cidrRange, dotted, publicAddressCount, union } from "../../../core/config/address-set";
import { parseStackConfig } from "../../../core/config/stack";
import { namespacePolicies } from "../../../workloads/security/namespace";
import { configProblems, minimalConfig } from "../../helpers/fixtures";
import type { NetworkPolicy } from "../../../workloads/k8s/types";
import { mulberry32 } from "../../helpers/random";

/** Problems of a prod stack whose API endpoint admits `cidrs`. */
function prodEndpoint(cidrs: unknown[]): string {
  return configProblems({
    ...minimalConfig(),
    environment: "prod",
    platform: { ...minimalConfig().platform, cluster: { mode: "create", name: "t", publicAccessCidrs: cidrs } },
  });
}

/** A deterministic generator, so a failure names its seed. */
const rng = mulberry32;

/** `0.0.0.0/0` split at random into 2 to ~40 CIDRs that cover it exactly, in random order. */
function randomSplit(random: () => number): string[] {
  const out: string[] = [];
  const split = (first: number, prefix: number) => {
    if (prefix < 12 && (prefix === 0 || random() < 0.55)) {
      split(first, prefix + 1);
      split(first + 2 ** (31 - prefix), prefix + 1);
    } else out.push(`${dotted(first)}/${prefix}`);
  };
  split(0, 0);
  return out.toSorted(() => random() - 0.5);
}

describe("address sets", () => {
  it("merges and counts ranges as sets", () => {
    expect(union([cidrRange("10.0.0.0/9")!, cidrRange("10.128.0.0/9")!])).toEqual([cidrRange("10.0.0.0/8")]);
    expect(addressCount([cidrRange("0.0.0.0/1")!, cidrRange("128.0.0.0/1")!])).toBe(2 ** 32);
    expect(publicAddressCount(["10.0.0.0/8", "192.168.0.0/16"])).toBe(0);
    expect(publicAddressCount(["203.0.113.0/24", "203.0.113.0/25"])).toBe(256);
  });

  it("refuses every spelling of an open prod endpoint from the trial", () => {
    for (const cidrs of [
      ["0.0.0.0/1", "128.0.0.0/1"],
      ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"],
      ["1.0.0.0/8", "2.0.0.0/7", "4.0.0.0/6"],
    ])
      expect(prodEndpoint(cidrs), cidrs.join(" ")).toMatch(/a prod API endpoint open to [\d,]+ public addresses/);
    expect(prodEndpoint(["0.0.0.0/00"])).toContain("with octets 0-255 and a prefix without leading zeros");
  });

  it("property: every split of the whole address space is refused for prod (200 seeds)", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const cidrs = randomSplit(rng(seed));
      expect(addressCount(cidrs.map((c) => cidrRange(c)!)), `seed ${seed}`).toBe(2 ** 32);
      expect(prodEndpoint(cidrs), `seed ${seed}: ${cidrs.join(" ")}`).toMatch(/a prod API endpoint open to/);
    }
  });

  it("accepts a prod endpoint narrowed to a few networks", () => {
    const raw = minimalConfig();
    raw.environment = "prod";
    raw.platform.cluster = { mode: "create", name: "t", publicAccessCidrs: ["44.192.0.0/24", "52.94.76.0/22"] };
    expect(() => parseStackConfig(raw)).not.toThrow();
  });

  it("keeps the metadata address out of every egress range that holds it, however written", () => {
    const egress = (cidrs: string[]) =>
      (
        namespacePolicies("ns", { httpsCidrs: cidrs }, {}).find(
          (p) => p.metadata.name === "ray-gpu-egress",
        ) as NetworkPolicy
      ).spec
        .egress!.flatMap((r: { to?: { ipBlock?: unknown }[] }) => r.to ?? [])
        .flatMap((t: { ipBlock?: unknown }) => (t.ipBlock ? [t.ipBlock] : []));
    expect(egress(["0.0.0.0/1", "128.0.0.0/1"])).toContainEqual({
      cidr: "128.0.0.0/1",
      except: ["169.254.169.254/32"],
    });
    expect(egress(["0.0.0.0/1", "128.0.0.0/1"])).toContainEqual({ cidr: "0.0.0.0/1" });
    expect(egress(["0.0.0.0/0"])).toEqual(
      expect.arrayContaining([{ cidr: "0.0.0.0/0", except: ["169.254.169.254/32"] }]),
    );
  });

  it("refuses a VPC in a range no host can use", () => {
    for (const [cidr, name] of [
      ["127.0.0.0/16", "loopback"],
      ["224.0.0.0/16", "multicast"],
      ["169.254.0.0/16", "link-local"],
      ["0.0.0.0/16", '"this network"'],
    ]) {
      const raw = minimalConfig();
      raw.platform["network"] = { cidrBlock: cidr };
      expect(configProblems(raw), cidr).toContain(`network.cidrBlock: overlaps`);
      expect(configProblems(raw), cidr).toContain(name);
    }
    const ok = minimalConfig();
    ok.platform["network"] = { cidrBlock: "10.20.0.0/16" };
    expect(() => parseStackConfig(ok)).not.toThrow();
  });
});
