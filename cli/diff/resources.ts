/**
 * What a change does to the platform's resources: the offline preview (`ray-gpu preview --json`, secrets redacted) at
 * the base and now, compared resource by resource. A resource is added, removed, replaced (an input that cannot change
 * in place changed, its parent changed, or it takes such an input from a resource that is replaced) or updated in
 * place. Pure.
 */
import type { PreviewResource } from "../preview/run";
import { byCodePoint } from "../../core/serialize";
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
  /** Parts the component creates inside that are replaced while it is updated (a VPC's subnets). */
  readonly replacedParts?: string;
}

/** What the stack's Kubernetes objects live on, at the base and now: a change moves every object to another cluster. */
export interface ClusterTarget {
  readonly before: string;
  readonly after: string;
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

/** What a change replaces: the resource itself, or only parts of it (a VPC's subnets) that others depend on. */
interface Replacement {
  readonly name: string;
  readonly cascadesTo: readonly string[];
  readonly what: string;
}

/** Replacements that others may follow: replaced resources, and resources whose parts are replaced. */
function replacements(changes: Iterable<ResourceChange>): Replacement[] {
  return [...changes].flatMap((c): Replacement[] => {
    const rule = replacementRule(c.type);
    if (c.status === "replaced") return [{ name: c.name, cascadesTo: rule?.cascadesTo ?? [], what: c.name }];
    if (c.replacedParts && rule?.parts)
      return [{ name: c.name, cascadesTo: rule.parts.cascadesTo, what: `${rule.parts.what} of ${c.name}` }];
    return [];
  });
}

/** Why `r` is replaced because others are: a replace-forcing input taken from one, or a type one cascades to. */
function knockOnReasons(r: PreviewResource, replaced: readonly Replacement[]): string[] {
  const paths = replacementRule(r.type)?.replaceOn ?? [];
  const whole = new Set(replaced.filter((c) => c.what === c.name).map((c) => c.name));
  const via = inputsFrom(r, whole)
    .filter((i) => coveredBy(i.path, paths))
    .map((i) => `${i.path} comes from ${i.from}, which is replaced`);
  const cascades = replaced
    .filter((c) => c.name !== r.name && typeMatches(r.type, c.cascadesTo))
    .map((c) => `it depends on ${c.what}, which ${c.what === c.name ? "is" : "are"} replaced`);
  return [...new Set([...via, ...cascades])];
}

/** Adds replacements that follow from others, until none is added (resources present at both sides only). */
function propagate(changes: Map<string, ResourceChange>, head: readonly PreviewResource[], base: ReadonlySet<string>) {
  for (let grew = true; grew;) {
    grew = false;
    const replaced = replacements(changes.values());
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

/** The parts (a VPC's subnets) an update replaces, when the type's rule names them and they changed. */
function partsReplaced(b: PreviewResource, a: PreviewResource): string | undefined {
  const parts = replacementRule(a.type)?.parts;
  return parts && json(parts.of(b.inputs)) !== json(parts.of(a.inputs)) ? parts.what : undefined;
}

/** Every Kubernetes object (and the provider) present at both sides is replaced when the cluster they target changes. */
function retarget(
  changes: Map<string, ResourceChange>,
  head: readonly PreviewResource[],
  both: ReadonlySet<string>,
  t: ClusterTarget,
): void {
  const because = `the stack's Kubernetes objects move from cluster ${t.before} to ${t.after}`;
  for (const r of head) {
    const onCluster = r.type === "pulumi:providers:kubernetes" || r.type.startsWith("kubernetes:");
    const current = changes.get(key(r));
    if (!onCluster || !both.has(key(r)) || (current && current.status !== "updated")) continue;
    changes.set(key(r), { ...withState(r, current?.inputs ?? []), status: "replaced", replacedBecause: [because] });
  }
}

/**
 * Every resource that differs, sorted by type and name; unchanged resources are left out. `cluster` is the cluster the
 * stack's Kubernetes objects target at both sides (an adopted cluster swapped for another, a created one for an adopted
 * one): the provider's kubeconfig is a secret, so the preview cannot show it.
 */
export function diffResources(
  base: readonly PreviewResource[],
  head: readonly PreviewResource[],
  cluster?: ClusterTarget,
): ResourceChange[] {
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
    const parts = partsReplaced(b, a);
    if (reasons.length > 0) changes.set(k, { ...withState(b, inputs), status: "replaced", replacedBecause: reasons });
    else if (inputs.length > 0)
      changes.set(k, { ...withState(b, inputs), status: "updated", ...(parts ? { replacedParts: parts } : {}) });
  }
  const both = new Set([...before.keys()].filter((k) => after.has(k)));
  if (cluster && cluster.before !== cluster.after) retarget(changes, head, both, cluster);
  propagate(changes, head, both);
  return [...changes.values()].sort((x, y) => byCodePoint(x.type, y.type) || byCodePoint(x.name, y.name));
}

/**
 * Replacements and deletions of resources that hold state: what `--fail-on replace` fires on. A retained resource
 * (`retainOnDelete`) removed from the stack stays in the cloud, so only its replacement counts (the stack moves to a new,
 * empty one).
 */
export function statefulLosses(changes: readonly ResourceChange[]): ResourceChange[] {
  return changes.filter(
    (c) =>
      c.loses && (c.status === "replaced" || (c.status === "removed" && !c.protection?.includes("retainOnDelete"))),
  );
}
