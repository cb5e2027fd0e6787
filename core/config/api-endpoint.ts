/**
 * Ranges the EKS public API endpoint never sees a request from. The public endpoint is reached over the internet, so
 * the source address it checks against `publicAccessCidrs` is always a public one (traffic from inside the VPC goes
 * to the private endpoint, which a created cluster always has). A range that holds no public address admits nobody:
 * the cluster is created, then every Kubernetes object of `pulumi up` times out ~15 minutes in. Pure.
 *
 * Sources: RFC 6890 (special-purpose registries, `SPECIAL_RANGES` of `./address-set.ts`), RFC 5737 (IPv4
 * documentation, TEST-NET-1/2/3), RFC 2544 (benchmarking), RFC 6890 section 2.2.2 (IETF protocol assignments); EKS user
 * guide, "Cluster API server endpoint" (public access CIDR blocks restrict the public endpoint only).
 */
import { addressCount, cidrRange, overlaps, SPECIAL_RANGES } from "./address-set";

/** Ranges no packet reaching the public endpoint comes from, each with its name. */
export const NO_PUBLIC_SOURCE: readonly { readonly cidr: string; readonly name: string }[] = [
  ...SPECIAL_RANGES.map(({ cidr, name }) => ({ cidr, name })),
  { cidr: "192.0.0.0/24", name: "IETF protocol assignments (RFC 6890)" },
  { cidr: "192.0.2.0/24", name: "a documentation range (RFC 5737 TEST-NET-1)" },
  { cidr: "198.18.0.0/15", name: "benchmarking (RFC 2544)" },
  { cidr: "198.51.100.0/24", name: "a documentation range (RFC 5737 TEST-NET-2)" },
  { cidr: "203.0.113.0/24", name: "a documentation range (RFC 5737 TEST-NET-3)" },
];

const RANGES = NO_PUBLIC_SOURCE.map((r) => ({ ...r, range: cidrRange(r.cidr)! }));

/** A `publicAccessCidrs` entry that admits no public address, with the ranges it lies in. */
export interface UnroutableEntry {
  readonly index: number;
  readonly cidr: string;
  /** `<cidr>, <name>` of each range it overlaps. */
  readonly within: readonly string[];
}

/** The entries (valid IPv4 CIDRs) whose every address lies in {@link NO_PUBLIC_SOURCE}. */
export function unroutableEntries(cidrs: readonly string[]): UnroutableEntry[] {
  return cidrs.flatMap((cidr, index) => {
    const r = cidrRange(cidr);
    if (
      !r ||
      addressCount(
        [r],
        RANGES.map((x) => x.range),
      ) > 0
    )
      return [];
    const within = RANGES.filter((x) => overlaps(r, x.range)).map((x) => `${x.cidr}, ${x.name}`);
    return [{ index, cidr, within }];
  });
}

/** Why an unroutable entry admits nobody, and the fix. */
export function unroutableMessage(e: UnroutableEntry): string {
  return (
    `lies in ${e.within.join("; ")}: the public API endpoint only ever sees public source addresses, so ` +
    `this range admits nobody, and pulumi up would create the cluster, then fail on its first Kubernetes object ` +
    `(~15 min in); list the public ranges you deploy from (your VPN's or office's egress, your CI runners'; ` +
    `curl https://checkip.amazonaws.com shows yours), or set publicEndpoint: false and deploy from inside the VPC`
  );
}

/**
 * Where `pulumi up` can reach the API of the cluster it creates (it creates every Kubernetes object through it), in
 * words; undefined for an adopted cluster, whose endpoint is not the stack's.
 */
export function apiEndpointNote(cluster: {
  readonly mode: "create" | "existing";
  readonly publicEndpoint?: boolean;
  readonly publicAccessCidrs?: readonly string[];
}): string | undefined {
  if (cluster.mode !== "create") return undefined;
  if (cluster.publicEndpoint)
    return (
      `public, from ${(cluster.publicAccessCidrs ?? []).join(", ")} (and private inside the VPC): run pulumi up ` +
      `from one of those ranges`
    );
  return (
    "private only: pulumi up creates the Kubernetes objects through it, so it must run from a network routed into " +
    "the VPC; the stack's VPC is new, so for the first deploy set publicEndpoint: true and publicAccessCidrs to the " +
    "public ranges you deploy from"
  );
}
