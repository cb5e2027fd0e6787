/** Our Helm values against a chart's own values file: every key we set must be one the chart has. */

/** Every path of leaves in `o`; maps under the keys in `opaque` (free-form values) and empty maps count as one leaf. */
export function valuePaths(o: unknown, opaque: readonly string[], prefix: string[] = []): string[][] {
  if (!o || typeof o !== "object" || Array.isArray(o) || Object.keys(o).length === 0) return [prefix];
  return Object.entries(o).flatMap(([k, v]) =>
    opaque.includes(k) ? [[...prefix, k]] : valuePaths(v, opaque, [...prefix, k]),
  );
}

/** The value at `path` of a values tree, or undefined. */
export const valueAt = (doc: unknown, path: readonly string[]) =>
  path.reduce<unknown>((cur, seg) => (cur as Record<string, unknown> | undefined)?.[seg], doc);

/** The dotted paths of `ours` that the chart's values file lacks (empty when every key we set is the chart's). */
export const keysNotInChart = (chart: unknown, ours: unknown, opaque: readonly string[]): string[] =>
  valuePaths(ours, opaque)
    .filter((path) => valueAt(chart, path) === undefined)
    .map((path) => path.join("."));
