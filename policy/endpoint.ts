/**
 * Whether an EKS API endpoint's `publicAccessCidrs` open it to the internet, judged as sets of addresses, not as
 * spellings: `["0.0.0.0/1", "128.0.0.0/1"]` is every address, as `0.0.0.0/0` is, and so is `["::/1", "8000::/1"]`.
 * IPv4 uses the stack config's own measure (`core/config/address-set.ts`, `MAX_PUBLIC_API_ADDRESSES`); IPv6 the
 * same share of its space (a /8). Pure.
 */
import { cidrRange, publicAddressCount } from "../core/config/address-set";
import { MAX_PUBLIC_API_ADDRESSES } from "../core/config/stack";

/** An IPv6 range as 128-bit numbers. */
interface Range6 {
  readonly first: bigint;
  readonly last: bigint;
}

/** The 128-bit number of an IPv6 address (`::` shorthand allowed, no embedded IPv4), or undefined. */
export function ipv6(address: string): bigint | undefined {
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groups = halves.map((h) => (h === "" ? [] : h.split(":")));
  const given = groups.flat();
  if (!given.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  const missing = 8 - given.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = halves.length === 1 ? given : [...groups[0]!, ...Array<string>(missing).fill("0"), ...groups[1]!];
  return all.reduce((n, g) => (n << 16n) + BigInt(parseInt(g, 16)), 0n);
}

/** The addresses of an IPv6 CIDR (host bits ignored), or undefined when it does not parse. */
export function cidr6Range(cidr: string): Range6 | undefined {
  const [address = "", prefixText = "", ...rest] = cidr.split("/");
  const ip = ipv6(address);
  if (rest.length || ip === undefined || !/^(0|[1-9]\d{0,2})$/.test(prefixText) || Number(prefixText) > 128)
    return undefined;
  const size = 1n << BigInt(128 - Number(prefixText));
  const first = (ip / size) * size;
  return { first, last: first + size - 1n };
}

/** How many IPv6 addresses the ranges hold together (overlaps counted once). */
export function address6Count(ranges: readonly Range6[]): bigint {
  const sorted = ranges.toSorted((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  let count = 0n;
  let end = -1n;
  for (const r of sorted) {
    if (r.last <= end) continue;
    count += r.last - (r.first > end ? r.first : end + 1n) + 1n;
    end = r.last;
  }
  return count;
}

/** IPv6 ranges may hold fewer addresses than this together: a /8's worth, the share of a /8 in IPv4. */
export const MAX_PUBLIC_API_ADDRESSES_V6 = 1n << 120n;

/** Why `cidrs` open an endpoint to the internet (or do not parse), or undefined when they are narrow enough. */
export function openToInternet(cidrs: readonly string[]): string | undefined {
  const bad = cidrs.filter((c) => cidrRange(c) === undefined && cidr6Range(c) === undefined);
  if (bad.length) return `holds ${bad.map((c) => JSON.stringify(c)).join(", ")}, not CIDRs`;
  const v4 = publicAddressCount(cidrs);
  const v6 = address6Count(cidrs.flatMap((c) => cidr6Range(c) ?? []));
  if (v4 >= MAX_PUBLIC_API_ADDRESSES)
    return `admits ${v4.toLocaleString("en-US")} public IPv4 addresses (a /8's worth or more; 0.0.0.0/0 is all)`;
  if (v6 >= MAX_PUBLIC_API_ADDRESSES_V6) return "admits a /8's worth of IPv6 addresses or more (::/0 is all)";
  return undefined;
}
