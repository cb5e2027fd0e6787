/**
 * Options for a component's children: parented to the component (so they take its providers), and waiting for what the
 * component was asked to wait for. Pulumi does not pass a component's `dependsOn` on to its children by itself.
 */
import * as pulumi from "@pulumi/pulumi";
import { checkNames, nameOverflow } from "../core/deploy/names";
import { ConfigError, type ConfigIssue } from "../core/errors";

/** `{ parent, dependsOn }` for the children of `parent`, with the component's own `dependsOn` and `extra`. */
export function childOptions(
  parent: pulumi.ComponentResource,
  opts: pulumi.ComponentResourceOptions | undefined,
  extra: readonly pulumi.Input<pulumi.Resource>[] = [],
): pulumi.CustomResourceOptions {
  return { parent, dependsOn: [...dependsOnOf(opts), ...extra] };
}

/** A component's `dependsOn` as a list. */
function dependsOnOf(opts: pulumi.ResourceOptions | undefined): pulumi.Input<pulumi.Resource>[] {
  const own = opts?.dependsOn;
  return own === undefined ? [] : Array.isArray(own) ? own : [own as pulumi.Input<pulumi.Resource>];
}

/**
 * Runs a pure planner in a component's constructor: a {@link ConfigError} becomes a `pulumi.RunError`, which the
 * Pulumi CLI prints (every problem, with its path) without a stack trace.
 */
export function planOrRunError<T>(component: string, plan: () => T): T {
  try {
    return plan();
  } catch (e) {
    if (e instanceof ConfigError) throw new pulumi.RunError(`${component}: ${e.message}`);
    throw e;
  }
}

/** Options that keep data: `pulumi destroy` and replacements refuse to delete it, and it stays if it leaves the program. */
export const keptOptions = (keep: boolean): pulumi.CustomResourceOptions =>
  keep ? { protect: true, retainOnDelete: true } : {};

/** Components whose children's names are checked already (by their own or an ancestor's {@link nameChecks}). */
const CHECKING = new WeakSet<pulumi.Resource>();

/** The name checks of one component: its options (with the check), and what it calls after `super` and at the end. */
export interface NameChecks {
  /** The component's resource options, with a transformation that checks every descendant's names. */
  readonly opts: pulumi.ComponentResourceOptions;
  /** Marks the component: its child components leave the checks to it. Call right after `super`. */
  own(component: pulumi.ComponentResource): void;
  /** Throws one error listing every name over its limit (`RunError`: printed without a stack trace). */
  report(component: string): void;
}

/**
 * Checks the name of every resource created under a component against its service's limit (`core/deploy/names.ts`)
 * as it is created: a long component name makes long child names (`<name>-<role>`), which Helm or AWS refuses only at
 * deploy. A component under another that checks leaves it to that one, so each problem is reported once.
 */
export function nameChecks(opts: pulumi.ComponentResourceOptions | undefined): NameChecks {
  const parent = opts?.parent;
  if (parent && CHECKING.has(parent)) return { opts: opts ?? {}, own: (c) => CHECKING.add(c), report: () => {} };
  const problems: ConfigIssue[] = [];
  let overflow = 0;
  const check: pulumi.ResourceTransformation = ({ type, name, props }) => {
    const node = { type, name, parent: null, dependsOn: [], inputs: props as Record<string, unknown> };
    problems.push(...checkNames([node]).map((p) => ({ path: p.resource, message: p.message })));
    overflow = Math.max(overflow, nameOverflow(node));
    return undefined;
  };
  return {
    opts: { ...opts, transformations: [...(opts?.transformations ?? []), check] },
    own: (c) => CHECKING.add(c),
    report: (component) => {
      if (!problems.length) return;
      const [kind, name = ""] = component.split(" ");
      const fix = {
        path: component,
        message: `its children are named "${name}-<role>": a name of at most ${name.length - overflow} characters fits every limit`,
        value: name,
      };
      throw new pulumi.RunError(`${kind}: ${new ConfigError([fix, ...problems]).message}`);
    },
  };
}

/** Something that gives a workload's or an add-on's resource options: a `RayGpuPlatform`. */
export interface OrderingSource {
  /** Options of a RayWorkload on it: its Kubernetes provider, and what a job waits for. */
  workloadOptions(): pulumi.ComponentResourceOptions;
  /** Options of a Helm add-on on it: its Kubernetes provider, and the nodes and CoreDNS its pods need. */
  addonOptions(): pulumi.ComponentResourceOptions;
}

/** `base` (a platform's) and the caller's own options: providers and `dependsOn` of both, the rest the caller's. */
export function withOrdering(
  base: pulumi.ComponentResourceOptions | undefined,
  opts: pulumi.ComponentResourceOptions | undefined,
): pulumi.ComponentResourceOptions | undefined {
  if (!base) return opts;
  const providers = (o: pulumi.ComponentResourceOptions | undefined) =>
    Array.isArray(o?.providers) ? o.providers : Object.values(o?.providers ?? {});
  const { provider: own, ...rest } = opts ?? {};
  const provider = own ? [own] : [];
  return {
    ...base,
    ...rest,
    providers: [...providers(base), ...providers(opts), ...provider],
    dependsOn: [...dependsOnOf(base), ...dependsOnOf(opts)],
  };
}
