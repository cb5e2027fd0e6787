/**
 * Finds the strings and numbers of a schema that have no grammar: neither a check that constrains them (a pattern, a
 * format, a range, a refinement, a transform) nor a free-text mark with its reason (`./free-text.ts`). Read from zod's
 * own definitions (`_zod.def`), so a wrapper, a union or a lazy schema hides nothing.
 */
import type { z } from "zod";
import { FREE_TEXT } from "./free-text";

// The slice of zod 4's `_zod.def` walked here.
interface Node {
  readonly _zod: { readonly def: Def };
}
interface Def {
  readonly type: string;
  readonly format?: string;
  readonly checks?: readonly Node[];
  readonly check?: string;
  readonly shape?: Readonly<Record<string, Node>>;
  readonly element?: Node;
  readonly innerType?: Node;
  readonly in?: Node;
  readonly out?: Node;
  readonly options?: readonly Node[];
  readonly keyType?: Node;
  readonly valueType?: Node;
  readonly getter?: () => Node;
  readonly items?: readonly Node[];
  readonly rest?: Node | null;
  readonly left?: Node;
  readonly right?: Node;
}

/** Checks that give a value a grammar, by the leaf type they apply to (a length alone is no grammar). */
const GRAMMAR_CHECKS: Readonly<Record<"string" | "number", ReadonlySet<string>>> = {
  string: new Set(["string_format", "custom"]),
  number: new Set(["number_format", "greater_than", "less_than", "multiple_of", "custom"]),
};

/** Leaves that must have a grammar or a free-text mark; `bigint` is read as a number, `any`/`unknown` have none. */
const LEAVES: Readonly<Record<string, "string" | "number" | "anything">> = {
  string: "string",
  number: "number",
  bigint: "number",
  any: "anything",
  unknown: "anything",
};

/** Schemas that stand for their inner schema: they add no structure, and a check on them checks the same value. */
const SAME_VALUE = (d: Def): Node | undefined =>
  d.type === "lazy" ? d.getter!() : d.type === "pipe" ? d.in : d.innerType;

/** Where the children of a structured schema live: a path step and the child. */
const CHILDREN: Readonly<Record<string, (d: Def) => [string, Node][]>> = {
  object: (d) => Object.entries(d.shape ?? {}).map(([k, v]) => [`.${k}`, v]),
  array: (d) => [["[]", d.element!]],
  set: (d) => [["[]", (d as { valueType: Node }).valueType]],
  record: (d) => [
    ["{key}", d.keyType!],
    [".*", d.valueType!],
  ],
  map: (d) => [
    ["{key}", d.keyType!],
    [".*", d.valueType!],
  ],
  union: (d) => (d.options ?? []).map((o) => ["", o]),
  intersection: (d) => [
    ["", d.left!],
    ["", d.right!],
  ],
  tuple: (d) => [
    ...(d.items ?? []).map((it, i): [string, Node] => [`[${i}]`, it]),
    ...(d.rest ? [["[]", d.rest] as [string, Node]] : []),
  ],
};

/** What the wrappers met on the way to a leaf said about it. */
interface Context {
  readonly refined: boolean;
  readonly reason: string | undefined;
}

function hasGrammar(def: Def, leaf: "string" | "number"): boolean {
  if (def.format !== undefined) return true;
  return (def.checks ?? []).some((c) => GRAMMAR_CHECKS[leaf].has(c._zod.def.check ?? ""));
}

/** A string or number of a schema, and what gives it its grammar. */
export interface Leaf {
  /** `.key` for an object's key, `[]` for a list's entries, `.*` and `{key}` for a record's values and keys. */
  readonly path: string;
  readonly type: string;
  /** A check constrains it; or it is marked free text (with `reason`); or neither. */
  readonly grammar: "checked" | "free text" | "none";
  readonly reason?: string;
}

/**
 * Every string and number under `schema` (and every `any` or `unknown`), each once per path; union members share
 * their path, so a field of every workload kind is listed once.
 * @internal
 */
export function schemaLeaves(schema: z.ZodType, root = ""): Leaf[] {
  const leaves = new Map<string, Leaf>();
  const onStack = new Set<Node>();
  const visit = (node: Node, path: string, ctx: Context): void => {
    if (onStack.has(node)) return;
    onStack.add(node);
    const def = node._zod.def;
    const here: Context = {
      refined: ctx.refined || (!LEAVES[def.type] && (def.checks ?? []).length > 0),
      reason: FREE_TEXT.get(node as unknown as z.ZodType)?.reason ?? ctx.reason,
    };
    const inner = SAME_VALUE(def);
    const leaf = LEAVES[def.type];
    if (def.type === "pipe" && def.out?._zod.def.type === "transform") visit(inner!, path, { ...here, refined: true });
    else if (inner && !CHILDREN[def.type]) visit(inner, path, here);
    else if (leaf) {
      const type = leaf === "anything" ? def.type : leaf;
      const checked = leaf !== "anything" && (here.refined || hasGrammar(def, leaf));
      const grammar = here.reason !== undefined ? "free text" : checked ? "checked" : "none";
      leaves.set(`${path} (${type})`, {
        path,
        type,
        grammar,
        ...(here.reason !== undefined && { reason: here.reason }),
      });
    } else
      for (const [step, child] of CHILDREN[def.type]?.(def) ?? [])
        visit(child, path === "" || path.endsWith(":") ? path + step.replace(/^\./, "") : path + step, NONE);
    onStack.delete(node);
  };
  visit(schema as unknown as Node, root, NONE);
  return [...leaves.values()].sort((a, b) =>
    a.path === b.path ? a.type.localeCompare(b.type) : a.path.localeCompare(b.path),
  );
}

const NONE: Context = { refined: false, reason: undefined };

/**
 * The strings and numbers under `schema` with no grammar and no free-text mark, and the marks with an empty reason,
 * as `<path> (<type>): <problem>`, e.g. `ray-gpu:workloads[].entrypoint (string): no grammar and no free-text mark`.
 * @internal
 */
export function grammarGaps(schema: z.ZodType, root = ""): string[] {
  return schemaLeaves(schema, root).flatMap((l) =>
    l.grammar === "none"
      ? [`${l.path} (${l.type}): no grammar and no free-text mark`]
      : l.grammar === "free text" && l.reason!.trim() === ""
        ? [`${l.path} (${l.type}): marked free text with an empty reason`]
        : [],
  );
}
