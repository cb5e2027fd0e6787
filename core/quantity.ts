/**
 * Units live in names (`memoryGiB`, `cpuMillis`) everywhere in the core. This file is the only place that
 * turns them into Kubernetes quantity strings or byte counts.
 */

export const MIB = 1024 ** 2;
export const GIB = 1024 ** 3;

/** Whole GiB as a Kubernetes quantity: `gibQuantity(64)` is `"64Gi"`. */
export function gibQuantity(gib: number): string {
  if (!Number.isInteger(gib) || gib < 0)
    throw new RangeError(`gibQuantity needs a whole, non-negative GiB count, got ${gib}`);
  return `${gib}Gi`;
}

/** Whole CPUs as a Kubernetes quantity: `cpuQuantity(46)` is `"46"`. */
export function cpuQuantity(cpus: number): string {
  if (!Number.isInteger(cpus) || cpus < 0)
    throw new RangeError(`cpuQuantity needs a whole, non-negative CPU count, got ${cpus}`);
  return String(cpus);
}

/** GiB to bytes, as the decimal string `ray start --object-store-memory` expects. */
export function gibToBytesString(gib: number): string {
  return String(Math.round(gib * GIB));
}

/** MiB to GiB, rounded down to a whole GiB. */
export function mibToWholeGiB(mib: number): number {
  return Math.floor(mib / 1024);
}

/** Rounds to 2 decimals for display (plans and reasons), never for sizing. */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** Rounds to 3 decimals: GiB, $/h and percentages in plan documents, diffs and reports. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

const QUANTITY_SUFFIX: Readonly<Record<string, number>> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 1024,
  Mi: MIB,
  Gi: GIB,
  Ti: 1024 ** 4,
};

/** Parses a Kubernetes quantity ("46", "500m", "168Gi", "1e3") into a plain number (cores or bytes). */
export function parseQuantity(q: string | number): number {
  if (typeof q === "number") return q;
  const m = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q.trim());
  if (!m) throw new RangeError(`not a Kubernetes quantity: ${JSON.stringify(q)}`);
  return Number(m[1]) * QUANTITY_SUFFIX[m[2] ?? ""]!;
}
