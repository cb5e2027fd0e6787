/**
 * Options for a component's children: parented to the component (so they take its providers), and waiting for what the
 * component was asked to wait for. Pulumi does not pass a component's `dependsOn` on to its children by itself.
 */
import * as pulumi from "@pulumi/pulumi";
import { ConfigError } from "../core/errors";

/** `{ parent, dependsOn }` for the children of `parent`, with the component's own `dependsOn` and `extra`. */
export function childOptions(
  parent: pulumi.ComponentResource,
  opts: pulumi.ComponentResourceOptions | undefined,
  extra: readonly pulumi.Input<pulumi.Resource>[] = [],
): pulumi.CustomResourceOptions {
  const own = opts?.dependsOn;
  const inherited = own === undefined ? [] : Array.isArray(own) ? own : [own as pulumi.Input<pulumi.Resource>];
  return { parent, dependsOn: [...inherited, ...extra] };
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
