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

/**
 * {@link stableJson} of `head` with one more field, `key`, holding the array `items`, made piece by piece (one piece
 * per item, each item made only when its piece is): a document too large to hold as one string is written as it is
 * made. `key` must sort after every key of `head`, where the sorted document has it.
 * @throws Error when a key of `head` sorts after `key` or is `key`
 */
export function* stableJsonPieces(
  head: Readonly<Record<string, unknown>>,
  key: string,
  items: Iterable<unknown>,
): Generator<string> {
  const late = Object.keys(head).filter((k) => head[k] !== undefined && !(k < key));
  if (late.length > 0) throw new Error(`stableJsonPieces: ${late.join(", ")} must sort before ${key}`);
  const start = JSON.stringify(sortKeys(head), null, 2);
  yield start === "{}" ? `{\n  ${JSON.stringify(key)}: [` : `${start.slice(0, -2)},\n  ${JSON.stringify(key)}: [`;
  let first = true;
  for (const item of items) {
    // JSON text has no newline but between its lines (strings hold "\n" escaped): each line moves in by 4 spaces.
    const json = (JSON.stringify(sortKeys(item), null, 2) as string | undefined) ?? "null";
    yield `${first ? "" : ","}\n    ${json.replaceAll("\n", "\n    ")}`;
    first = false;
  }
  yield first ? "]\n}\n" : "\n  ]\n}\n";
}
