/**
 * What every policy rule reads and returns: a resource as the policy engine sees it, a rule over some resource types,
 * and the small readers that walk untyped inputs without trusting their shape. Pure.
 */

/** A resource as a policy sees it. */
export interface PolicyInput {
  /** The Pulumi type token, e.g. `aws:eks/cluster:Cluster` or `kubernetes:ray.io/v1:RayJob`. */
  readonly type: string;
  readonly name: string;
  /** The resource's inputs (for Kubernetes objects, the object itself). */
  readonly props: Readonly<Record<string, unknown>>;
  /** The `protect` resource option. @default false */
  readonly protect?: boolean;
}

/** A rule on one or more resource types: what it checks, and each violation as a sentence. */
export interface ResourceRule {
  readonly name: string;
  readonly description: string;
  readonly types: readonly string[];
  readonly check: (r: PolicyInput) => string[];
}

/** An untyped object from a resource's inputs. */
export type Obj = Record<string, unknown>;
/** `v` if it is an object, else `{}`. */
export const obj = (v: unknown): Obj => (v && typeof v === "object" && !Array.isArray(v) ? (v as Obj) : {});
/** `v` if it is an array, else `[]`. */
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
/** `v` as a list, as IAM and a few AWS inputs write it: absent is `[]`, one value is `[v]`, an array is itself. */
export const list = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
/** Whether `v` holds at least one key or element. */
export const nonEmpty = (v: unknown) => (Array.isArray(v) ? v.length > 0 : Object.keys(obj(v)).length > 0);

/** The kind of a Pulumi type token: `aws:eks/cluster:Cluster` is `Cluster`. */
export const kindOf = (type: string) => type.slice(type.lastIndexOf(":") + 1);

/**
 * One violation, worded the same way by every rule: the resource (kind and name), the field path, what is wrong, and
 * the fix, e.g. `RayJob j: spec.rayClusterSpec.authOptions.mode is not "token"; set authOptions: {mode: token}`.
 */
export const violation = (r: PolicyInput, path: string, problem: string, fix: string) =>
  `${kindOf(r.type)} ${r.name}: ${path} ${problem}; ${fix}`;

/** `[i]` for an element of an array, nothing for a value written alone (IAM's single-object `Statement`). */
export const indexPath = (v: unknown, i: number) => (Array.isArray(v) ? `[${i}]` : "");

/** A value as a message shows it: JSON, or `not set` when absent. */
export const shown = (v: unknown) => (v === undefined ? "not set" : JSON.stringify(v));
