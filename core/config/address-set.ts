/**
 * IPv4 ranges judged as sets of addresses, not as spellings: `["0.0.0.0/1", "128.0.0.0/1"]` is every address, as
 * `0.0.0.0/0` is. Used by the rules that refuse an API endpoint open to the internet, that keep the instance metadata
 * address out of the pods' egress, and that keep a VPC out of ranges no host can use. Pure.
 */

/** An inclusive range of IPv4 addresses as 32-bit numbers. */
export interface AddressRange {
  readonly first: number;
  readonly last: number;
}

/** The IPv4 address of `a.b.c.d` as a 32-bit number, or undefined if an octet is not 0-255 (or has a leading 0). */
export function ipv4(address: string): number | undefined {
  const parts = address.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** `a.b.c.d` of a 32-bit number. */
export const dotted = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

/** The prefix length of `/<n>`, written without a leading zero (`/0` to `/32`), or undefined. */
export function prefixLength(text: string): number | undefined {
  return /^(0|[1-9]\d?)$/.test(text) && Number(text) <= 32 ? Number(text) : undefined;
}

/** The addresses of a valid CIDR (`a.b.c.d/n`), host bits ignored; undefined when it does not parse. */
export function cidrRange(cidr: string): AddressRange | undefined {
  const [address = "", prefixText = "", ...rest] = cidr.split("/");
  const ip = ipv4(address);
  const prefix = prefixLength(prefixText);
  if (rest.length > 0 || ip === undefined || prefix === undefined) return undefined;
  const size = 2 ** (32 - prefix);
  const first = Math.floor(ip / size) * size;
  return { first, last: first + size - 1 };
}

/** The union of ranges, sorted and merged (touching ranges join). */
export function union(ranges: readonly AddressRange[]): AddressRange[] {
  const sorted = ranges.toSorted((a, b) => a.first - b.first);
  const out: AddressRange[] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r.first <= last.last + 1)
      out[out.length - 1] = { first: last.first, last: Math.max(last.last, r.last) };
    else out.push(r);
  }
  return out;
}

/** How many addresses of `ranges` are not in `minus`. */
export function addressCount(ranges: readonly AddressRange[], minus: readonly AddressRange[] = []): number {
  const cut = union(minus);
  return union(ranges).reduce((n, r) => {
    const inside = cut.reduce((m, c) => m + Math.max(0, Math.min(r.last, c.last) - Math.max(r.first, c.first) + 1), 0);
    return n + (r.last - r.first + 1) - inside;
  }, 0);
}

/** Whether `range` holds `address`. */
export const holds = (range: AddressRange, address: number) => range.first <= address && address <= range.last;

/** Whether two ranges share an address. */
export const overlaps = (a: AddressRange, b: AddressRange) => a.first <= b.last && b.first <= a.last;

/** Special-purpose ranges of RFC 6890 no public host uses, each with its name. */
export const SPECIAL_RANGES: readonly { readonly cidr: string; readonly name: string; readonly vpc: boolean }[] = [
  { cidr: "0.0.0.0/8", name: '"this network"', vpc: false },
  { cidr: "10.0.0.0/8", name: "private use (RFC 1918)", vpc: true },
  { cidr: "100.64.0.0/10", name: "shared address space (RFC 6598)", vpc: true },
  { cidr: "127.0.0.0/8", name: "loopback", vpc: false },
  { cidr: "169.254.0.0/16", name: "link-local (the instance metadata service lives here)", vpc: false },
  { cidr: "172.16.0.0/12", name: "private use (RFC 1918)", vpc: true },
  { cidr: "192.168.0.0/16", name: "private use (RFC 1918)", vpc: true },
  { cidr: "224.0.0.0/4", name: "multicast", vpc: false },
  { cidr: "240.0.0.0/4", name: "reserved for future use", vpc: false },
];

/** Ranges no host of the internet uses: the special-purpose ones above. */
const NOT_PUBLIC = SPECIAL_RANGES.map((s) => cidrRange(s.cidr)!);

/** How many public internet addresses the CIDRs admit together (special-purpose ranges left out). */
export const publicAddressCount = (cidrs: readonly string[]) =>
  addressCount(
    cidrs.flatMap((c) => cidrRange(c) ?? []),
    NOT_PUBLIC,
  );

/** The special-purpose ranges a VPC may not use that `cidr` overlaps (none for a valid VPC range). */
export const unusableForVpc = (cidr: string) => {
  const r = cidrRange(cidr);
  return r ? SPECIAL_RANGES.filter((s) => !s.vpc && overlaps(r, cidrRange(s.cidr)!)) : [];
};
