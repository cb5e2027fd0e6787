/** JSON Schema helpers shared by the generated schemas (the tuning document, the run record). */

/** Drops zod's ±2^53 bounds on integers: they are no rule of ours. */
export function withoutSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(withoutSafeIntegerBounds);
  if (!node || typeof node !== "object") return;
  const s = node as { minimum?: number; maximum?: number };
  if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
  if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
  Object.values(s).forEach(withoutSafeIntegerBounds);
}
