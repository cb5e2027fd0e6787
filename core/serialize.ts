/**
 * Byte-stable serialization: keys sorted at every level, so rendered manifests, Helm values and plans change
 * only when their content does.
 */
import { emitYaml } from "./yaml-emit";

/** Deep copy of `value` with object keys sorted; arrays keep their order. `undefined` fields are dropped. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v) => sortKeys(v)) as T;
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out as T;
  }
  return value;
}

/** JSON with sorted keys, 2-space indent and a trailing newline. */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

/** YAML with sorted keys; long strings are never folded, so a diff shows real changes only. Linear in its size. */
export function stableYaml(value: unknown): string {
  return emitYaml(value, { sortKeys: true });
}

/** `a` before `b` by code point (UTF-16 unit order): unlike `localeCompare`, never dependent on the machine's locale. */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
