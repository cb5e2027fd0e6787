/**
 * The deploy simulation as a stack rule: the resources `pulumi preview --policy-pack` hands the pack (type, name,
 * props, parent, dependencies) as the graph `checkProgram` reads (`core/deploy/program.ts`), so a stack whose
 * `pulumi up` would wait for ever or be refused (a release before any node, a RayJob before its CRD, a Ray pod no
 * node group takes, a name over its limit) is refused before anything is created. Pure: no `@pulumi/policy` here.
 */
import { checkProgram } from "../core/deploy/program";
import type { DeployNode } from "../core/deploy/order";

/** The name of the stack rule. */
export const DEPLOY_RULE_NAME = "deploy-simulation";

/** A resource of the stack as `@pulumi/policy`'s `validateStack` gives it (`PolicyResource`): the part read here. */
export interface StackResourceInput {
  readonly type: string;
  readonly name: string;
  /** Its inputs, as known at preview (values only the cloud knows are missing). */
  readonly props: Readonly<Record<string, unknown>>;
  readonly parent?: { readonly name: string } | undefined;
  /** What it depends on: `dependsOn` and the resources whose outputs it takes. */
  readonly dependencies: readonly { readonly name: string }[];
  /** The same, per input. */
  readonly propertyDependencies?: Readonly<Record<string, readonly { readonly name: string }[]>>;
}

/** A stack resource as a node of the deploy graph. */
export function deployNode(r: StackResourceInput): DeployNode {
  const deps = [...r.dependencies, ...Object.values(r.propertyDependencies ?? {}).flat()].map((d) => d.name);
  return { type: r.type, name: r.name, parent: r.parent?.name ?? null, dependsOn: [...new Set(deps)], inputs: r.props };
}

/** Every problem of the deploy simulation, one line each: `<resource>: <problem and fix>`. */
export function deploySimulationViolations(resources: readonly StackResourceInput[]): string[] {
  return checkProgram(resources.map(deployNode)).map((p) => `${p.resource}: ${p.message}`);
}
