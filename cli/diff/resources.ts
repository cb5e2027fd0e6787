/**
 * What a change does to the platform's resources: the offline preview (`ray-gpu preview --json`, secrets redacted) at
 * the base and now, compared resource by resource. A resource is added, removed, replaced (an input that cannot change
 * in place changed, its parent changed, or it takes such an input from a resource that is replaced) or updated in
 * place. Pure.
 */
import type { PreviewResource } from "../preview/run";
import { coveredBy, replacementRule, stateOf, typeMatches } from "./replacement";

/** One input that changed. Values are the preview's (secrets already redacted); long ones are summarized. */
export interface InputChange {
  readonly path: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** One resource that differs between the base and now. */
export interface ResourceChange {
  readonly type: string;
  readonly name: string;
  readonly status: "added" | "removed" | "replaced" | "updated";
  /** Inputs that changed (empty for added and removed resources). */
  readonly inputs: readonly InputChange[];
  /** Why it is replaced: the inputs that force it, a new parent, or a replaced resource it takes a value from. */
  readonly replacedBecause?: readonly string[];
  /** What a replacement or deletion loses, for resources that hold state (cluster, bucket, key, network, namespace). */
  readonly loses?: string;
  /** The base's protection: a protected resource stops `pulumi up` when it would be deleted; a retained one stays. */
  readonly protection?: readonly ("protect" | "retainOnDelete")[];
}

/** `{ a: { b: 1 } }` as `[["a.b", 1]]`; arrays and scalars are leaves. */
function flatten(value: unknown, prefix = ""): [string, unknown][] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [[prefix, value]];
  const entries = Object.entries(value);
  if (entries.length === 0) return [[prefix, value]];
  return entries.flatMap(([k, v]) => flatten(v, prefix ? `${prefix}.${k}` : k));
}

const json = (v: unknown) => JSON.stringify(v) ?? "undefined";

const LONG = 120;

/**
 * Long values (user data, policies, chart config) as their length and, where both sides are known, the part around
 * the first difference, so a line stays readable and still shows what changed.
 */
function summarizePair(before: unknown, after: unknown): [unknown, unknown] {
  const text = (v: unknown) => (v === undefined ? undefined : typeof v === "string" ? v : json(v));
  const [b, a] = [text(before), text(after)];
  if ((b ?? "").length <= LONG && (a ?? "").length <= LONG) return [before, after];
  let at = 0;
  while (b !== undefined && a !== undefined && at < b.length && b[at] === a[at]) at++;
  const around = (t: string | undefined) =>
    t === undefined
      ? undefined
      : t.length <= LONG
        ? t
        : `<${t.length} characters: …${t.slice(Math.max(0, at - 16), at + 40)}…>`;
  return [around(b), around(a)];
}

function inputChanges(before: Record<string, unknown>, after: Record<string, unknown>): InputChange[] {
  const [b, a] = [new Map(flatten(before)), new Map(flatten(after))];
  return [...new Set([...b.keys(), ...a.keys()])]
    .sort()
    .filter((k) => json(b.get(k)) !== json(a.get(k)))
    .map((path) => {
      const [x, y] = summarizePair(b.get(path), a.get(path));
      return { path, before: x, after: y };
    });
}

/** Inputs of `r` that hold a value the cloud assigns to a resource named in `names` (`<computed: … of NAME>`). */
function inputsFrom(r: PreviewResource, names: ReadonlySet<string>): { path: string; from: string }[] {
  return flatten(r.inputs).flatMap(([path, v]) => {
    const values = Array.isArray(v) ? v : [v];
    return values.flatMap((x) => {
      const from = typeof x === "string" ? /^<computed: .* of (.+)>$/.exec(x)?.[1] : undefined;
      return from && names.has(from) ? [{ path, from }] : [];
    });
  });
}

/** Why an in-place change is a replacement, from the type's rule, the resource's own `replaceOnChanges` and its parent. */
function directReasons(b: PreviewResource, a: PreviewResource, inputs: readonly InputChange[]): string[] {
  const rule = replacementRule(a.type);
  const paths = [...(rule?.replaceOn ?? []), ...(a.replaceOnChanges ?? [])];
  const removed = rule?.replaceWhenRemoved ?? [];
  const forced = inputs
    .filter((i) => coveredBy(i.path, paths) || (i.after === undefined && coveredBy(i.path, removed)))
    .map((i) => (i.after === undefined ? `${i.path} removed` : i.path));
  const parent = b.parent !== a.parent ? [`parent ${b.parent ?? "(stack)"} → ${a.parent ?? "(stack)"}`] : [];
  return [...forced, ...parent];
}

const key = (r: { type: string; name: string }) => `${r.type}::${r.name}`;

/** Why `r` is replaced because others are: a replace-forcing input taken from one, or a type one cascades to. */
function knockOnReasons(r: PreviewResource, replaced: readonly ResourceChange[]): string[] {
  const paths = replacementRule(r.type)?.replaceOn ?? [];
  const names = new Set(replaced.map((c) => c.name));
  const via = inputsFrom(r, names)
    .filter((i) => coveredBy(i.path, paths))
    .map((i) => `${i.path} comes from ${i.from}, which is replaced`);
  const cascades = replaced
    .filter((c) => c.name !== r.name && typeMatches(r.type, replacementRule(c.type)?.cascadesTo ?? []))
    .map((c) => `it depends on ${c.name}, which is replaced`);
  return [...new Set([...via, ...cascades])];
}

/** Adds replacements that follow from others, until none is added (resources present at both sides only). */
function propagate(changes: Map<string, ResourceChange>, head: readonly PreviewResource[], base: ReadonlySet<string>) {
  for (let grew = true; grew;) {
    grew = false;
    const replaced = [...changes.values()].filter((c) => c.status === "replaced");
    for (const r of head) {
      const current = changes.get(key(r));
      if (!base.has(key(r)) || (current && current.status !== "updated")) continue;
      const because = knockOnReasons(r, replaced);
      if (because.length === 0) continue;
      changes.set(key(r), { ...withState(r, current?.inputs ?? []), status: "replaced", replacedBecause: because });
      grew = true;
    }
  }
}

function withState(r: PreviewResource, inputs: readonly InputChange[]) {
  const loses = stateOf(r.type);
  return {
    type: r.type,
    name: r.name,
    inputs,
    ...(loses ? { loses } : {}),
    ...(r.protection ? { protection: r.protection } : {}),
  };
}

/** Every resource that differs, sorted by type and name; unchanged resources are left out. */
export function diffResources(base: readonly PreviewResource[], head: readonly PreviewResource[]): ResourceChange[] {
  const before = new Map(base.map((r) => [key(r), r]));
  const after = new Map(head.map((r) => [key(r), r]));
  const changes = new Map<string, ResourceChange>();
  for (const [k, b] of before) if (!after.has(k)) changes.set(k, { ...withState(b, []), status: "removed" });
  for (const [k, a] of after) {
    const b = before.get(k);
    if (!b) {
      changes.set(k, { type: a.type, name: a.name, status: "added", inputs: [] });
      continue;
    }
    const inputs = inputChanges(b.inputs, a.inputs);
    const reasons = directReasons(b, a, inputs);
    if (reasons.length > 0) changes.set(k, { ...withState(b, inputs), status: "replaced", replacedBecause: reasons });
    else if (inputs.length > 0) changes.set(k, { ...withState(b, inputs), status: "updated" });
  }
  propagate(changes, head, new Set(before.keys()));
  return [...changes.values()].sort((x, y) => x.type.localeCompare(y.type) || x.name.localeCompare(y.name));
}

/** Replacements and deletions of resources that hold state: what `--fail-on replace` fires on. */
export function statefulLosses(changes: readonly ResourceChange[]): ResourceChange[] {
  return changes.filter((c) => c.loses && (c.status === "replaced" || c.status === "removed"));
}
