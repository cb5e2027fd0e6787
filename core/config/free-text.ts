/**
 * Fields that have no grammar on purpose. Every string or number of the stack config that reaches the platform has a
 * grammar (a pattern, a format, a range, a refinement; `./grammars.ts`) or is marked here as free text, with the
 * reason. `test/core/config/schema-grammar.test.ts` walks the schema and fails on a field that is neither.
 */
import { z } from "zod";

/** Why a field is free text: what it is, and what checks it instead of a grammar, if anything. */
export interface FreeText {
  readonly reason: string;
}

/**
 * The free-text marks, by schema (a zod registry: the schema itself is unchanged, and nothing is added to its JSON
 * schema or its types).
 * @internal
 */
export const FREE_TEXT = z.registry<FreeText>();

/**
 * Marks `schema` as free text because of `reason`, and returns it (the same object).
 * @internal
 */
export function freeText<S extends z.ZodType>(schema: S, reason: string): S {
  FREE_TEXT.add(schema, { reason });
  return schema;
}
