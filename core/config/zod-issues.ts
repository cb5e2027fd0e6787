/**
 * Turns zod issues into {@link ConfigIssue}s: one per problem, each with its full path, the value given and
 * the rule, plus "did you mean" hints for misspelt keys. Plays the part of `z.prettifyError` with the value
 * and the config namespace added.
 */
import type { z } from "zod";
import type { ConfigIssue } from "../errors";

type Path = readonly PropertyKey[];

/** Renders `["platform", "gpuNodeGroups", 0, "instanceType"]` as `platform.gpuNodeGroups[0].instanceType`. */
export function joinPath(path: Path): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/** What an error shows instead of a secret-looking value. */
export const REDACTED = "<redacted>";

/** The value at `path` in `input`, or `undefined`. */
export function valueAt(input: unknown, path: Path): unknown {
  let cur: unknown = input;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

/** Levenshtein distance, for key suggestions. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(
        row[j]! + 1,
        row[j - 1]! + 1,
        prev + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1),
      );
      prev = cur;
    }
  }
  return row[b.length]!;
}

/**
 * The closest known key, when it is close enough to be a typo (at most a third of its letters, or 2, changed). The
 * distance is at least the difference in length, so a candidate whose length is too far off is never measured: the
 * cost stays linear in the key's length whatever it is (a 4 MB name is compared with nothing).
 */
export function suggest(
  key: string,
  known: readonly string[],
  measure: (a: string, b: string) => number = distance,
): string | undefined {
  const limit = Math.max(2, Math.floor(key.length / 3));
  let best: string | undefined;
  let bestD = limit + 1;
  for (const k of known) {
    if (Math.abs(k.length - key.length) >= bestD) continue;
    const d = measure(key, k);
    if (d < bestD) [best, bestD] = [k, d];
  }
  return best;
}

// zod 4 keeps its definitions on `_zod.def`; this is the slice of it we walk to find the keys an object allows.
interface Def {
  type: string;
  shape?: Record<string, { _zod: { def: Def } }>;
  element?: { _zod: { def: Def } };
  innerType?: { _zod: { def: Def } };
  in?: { _zod: { def: Def } };
  options?: { _zod: { def: Def } }[];
  discriminator?: string;
}

function unwrap(def: Def): Def {
  let d = def;
  while (
    (d.type === "optional" || d.type === "default" || d.type === "nullable" || d.type === "prefault") &&
    d.innerType
  ) {
    d = d.innerType._zod.def;
  }
  if (d.type === "pipe" && d.in) return unwrap(d.in._zod.def);
  return d;
}

/** Picks the union member whose literal discriminator matches the input, if any. */
function pickOption(def: Def, input: unknown): Def | undefined {
  const key = def.discriminator;
  const options = def.options ?? [];
  if (key && input && typeof input === "object") {
    const want = (input as Record<string, unknown>)[key];
    for (const o of options) {
      const od = unwrap(o._zod.def);
      const lit = od.shape?.[key]?._zod.def as unknown as { values?: unknown[] } | undefined;
      if (lit?.values?.includes(want)) return od;
    }
  }
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const objects = options.map((o) => unwrap(o._zod.def)).filter((d) => d.type === "object");
    if (objects.length === 1) return objects[0];
  }
  return options.length === 1 ? unwrap(options[0]!._zod.def) : undefined;
}

/**
 * Keys the schema allows for the object at `path` (empty when it cannot tell).
 * @internal
 */
export function knownKeysAt(schema: z.ZodType, input: unknown, path: Path): string[] {
  let def = unwrap((schema as unknown as { _zod: { def: Def } })._zod.def);
  let cur: unknown = input;
  for (const seg of path) {
    if (def.type === "union") def = pickOption(def, cur) ?? def;
    if (def.type === "object" && def.shape && typeof seg === "string" && def.shape[seg])
      def = unwrap(def.shape[seg]._zod.def);
    else if (def.type === "array" && def.element && typeof seg === "number") def = unwrap(def.element._zod.def);
    else return [];
    cur = valueAt(cur, [seg]);
  }
  if (def.type === "union") def = pickOption(def, cur) ?? def;
  return def.type === "object" && def.shape ? Object.keys(def.shape) : [];
}

/**
 * Every key path a schema accepts, e.g. `platform.gpuNodeGroups[].instanceType`: union members merged, records (user
 * keys) not descended. The configuration reference is checked against it.
 * @internal
 */
export function schemaKeyPaths(schema: z.ZodType): Set<string> {
  const out = new Set<string>();
  const walk = (def: Def, path: string): void => {
    const d = unwrap(def);
    if (d.type === "array" && d.element) walk(d.element._zod.def, `${path}[]`);
    else if (d.type === "union") for (const o of d.options ?? []) walk(o._zod.def, path);
    else if (d.type === "object") {
      for (const [key, child] of Object.entries(d.shape ?? {})) {
        const p = path ? `${path}.${key}` : key;
        out.add(p);
        walk(child._zod.def, p);
      }
    }
  };
  walk((schema as unknown as { _zod: { def: Def } })._zod.def, "");
  return out;
}

function describe(issue: z.core.$ZodIssue, value: unknown): string {
  switch (issue.code) {
    case "invalid_type":
      if (typeof value === "number" && Number.isNaN(value))
        return `NaN is not a number; give a finite ${issue.expected}`;
      if (typeof value === "number" && !Number.isFinite(value))
        return `${String(value)} is not allowed; give a finite ${issue.expected}`;
      return value === undefined ? `required; expected ${issue.expected}` : `expected ${issue.expected}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union":
      if (value === undefined) return "required";
      if ("discriminator" in issue && Array.isArray((issue as { options?: unknown }).options)) {
        const options = (issue as unknown as { options: unknown[] }).options;
        return `must be one of ${options.map((v) => JSON.stringify(v)).join(", ")}`;
      }
      return issue.message;
    case "too_small":
      return issue.origin === "array"
        ? `needs at least ${String(issue.minimum)} entr${issue.minimum === 1 ? "y" : "ies"}`
        : issue.origin === "string"
          ? `must not be shorter than ${String(issue.minimum)} characters`
          : `must be ${issue.inclusive ? ">=" : ">"} ${String(issue.minimum)}`;
    case "too_big":
      return issue.origin === "string"
        ? `must not be longer than ${String(issue.maximum)} characters`
        : `must be ${issue.inclusive ? "<=" : "<"} ${String(issue.maximum)}`;
    case "invalid_key":
      return issue.issues.map((i) => i.message).join("; ");
    default:
      return issue.message;
  }
}

/**
 * A plain union (say, a model name or an architecture object) reports one `invalid_union` holding each branch's
 * issues. When exactly one branch accepted the input's type, its issues are the real ones: lift them, with full
 * paths.
 */
function flattenUnions(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const out: z.core.$ZodIssue[] = [];
  for (const issue of issues) {
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const typed = issue.errors.filter(
        (branch) => !branch.some((i) => i.code === "invalid_type" && i.path.length === 0),
      );
      if (typed.length === 1) {
        out.push(
          ...flattenUnions(typed[0]!.map((i) => ({ ...i, path: [...issue.path, ...i.path] }) as z.core.$ZodIssue)),
        );
        continue;
      }
    }
    out.push(issue);
  }
  return out;
}

/**
 * Converts a failed parse into config issues. `label` renders a zod path as the user's config path, e.g.
 * prefixing the `ray-gpu:` namespace.
 * @internal
 */
export function toConfigIssues(
  error: z.ZodError,
  schema: z.ZodType,
  input: unknown,
  label: (path: Path) => string,
): ConfigIssue[] {
  const issues = flattenUnions(error.issues);
  const unknown = new Map<z.core.$ZodIssue, UnknownKey[]>(
    issues.flatMap((issue) =>
      issue.code === "unrecognized_keys" ? [[issue, unknownKeys(issue, schema, input)] as const] : [],
    ),
  );
  const required = new Set(issues.filter((i) => isMissing(i, input)).map((i) => label(i.path)));
  // Required keys the input lacks but gives under a near name (`nmae` for a missing `name`): reported once, there.
  const misspelt = new Set(
    [...unknown.values()]
      .flat()
      .flatMap((u) => (u.hint === undefined ? [] : [label([...u.parent, u.hint])]))
      .filter((near) => required.has(near)),
  );
  const out: ConfigIssue[] = [];
  for (const issue of issues) {
    const keys = unknown.get(issue);
    if (keys) {
      out.push(...keys.map((u) => unknownKeyIssue(u, input, label, misspelt)));
      continue;
    }
    const value = valueAt(input, issue.path);
    if (isMissing(issue, input) && misspelt.has(label(issue.path))) continue;
    // A value that looks like a secret is never echoed back (errors end up in CI logs).
    const shown = issue.code === "custom" && issue.params?.["redact"] ? REDACTED : value;
    out.push({ path: label(issue.path), message: describe(issue, value), value: shown });
  }
  return out;
}

/**
 * A required key the input lacks: a plain type reports `invalid_type`, a union (a model name or its architecture)
 * `invalid_union`.
 */
function isMissing(issue: z.core.$ZodIssue, input: unknown): boolean {
  return (issue.code === "invalid_type" || issue.code === "invalid_union") && valueAt(input, issue.path) === undefined;
}

/** A key the schema does not allow: the object it is in, the keys allowed there, and the one it may mean. */
interface UnknownKey {
  readonly parent: Path;
  readonly key: string;
  readonly known: readonly string[];
  /** The allowed key whose name is close enough to be meant, if any. */
  readonly hint: string | undefined;
}

/** Each key of an `unrecognized_keys` issue, with the allowed keys (looked up once per issue) and the near one. */
function unknownKeys(
  issue: z.core.$ZodIssue & { code: "unrecognized_keys" },
  schema: z.ZodType,
  input: unknown,
): UnknownKey[] {
  const known = knownKeysAt(schema, input, issue.path);
  return issue.keys.map((key) => ({ parent: issue.path, key, known, hint: suggest(key, known) }));
}

/** The issue of an unknown key: the near key it may mean (and that the near key is missing), or the allowed keys. */
function unknownKeyIssue(
  u: UnknownKey,
  input: unknown,
  label: (path: Path) => string,
  misspelt: ReadonlySet<string>,
): ConfigIssue {
  const path = [...u.parent, u.key];
  const missing = u.hint !== undefined && misspelt.has(label([...u.parent, u.hint]));
  const rule =
    u.hint !== undefined
      ? `unknown key; did you mean "${u.hint}"?${missing ? ` ("${u.hint}" is required and missing)` : ""}`
      : u.known.length > 0
        ? `unknown key; allowed keys are ${u.known.join(", ")}`
        : "unknown key";
  return { path: label(path), message: rule, value: valueAt(input, path) };
}
