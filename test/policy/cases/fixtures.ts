/**
 * What the policy tests check: the prod stack's rendered KubeRay objects as the policy engine sees them, the same
 * Ray cluster as a RayCluster and a RayService, and the shape of a table of good and bad inputs per rule.
 */
import { RAY_TYPES, type PolicyInput, type RayKind, type StackPolicyInput } from "../../../policy/rules";
import type { RecordedResource } from "../../helpers/pulumi-mocks";
import { planStack } from "../../../workloads/stack";
import { repoStack, runtime } from "../../helpers/fixtures";

/**
 * What `ray-gpu render` writes for the prod stack (each job's objects and the namespace's shared ones: its
 * NetworkPolicies, …) as the policy engine sees them (types as @pulumi/kubernetes registers them).
 */
export function renderedProd(): PolicyInput[] {
  const plan = planStack(repoStack("prod"), { runtime });
  return [...plan.objects.flatMap((o) => o.objects), ...plan.shared].map((x) => ({
    type: `kubernetes:${x.apiVersion.includes("/") ? x.apiVersion : `core/${x.apiVersion}`}:${x.kind}`,
    name: x.metadata.name,
    props: x as unknown as Record<string, unknown>,
  }));
}

/** A resource's type and name from its URN (`urn:pulumi:<stack>::<project>::<parent types$>type::<name>`). */
const fromUrn = (urn: string) => {
  const parts = urn.split("::");
  return { type: parts[2]!.split("$").at(-1)!, name: parts.slice(3).join("::"), urn };
};

/** Resources a mocked program registered, as the pack's rules (stack rules included) see them. */
export const stackInputs = (recorded: readonly RecordedResource[]): StackPolicyInput[] =>
  recorded.map((r) => ({
    type: r.type,
    name: r.name,
    props: r.inputs,
    protect: r.protect,
    dependencies: r.dependencies.map(fromUrn),
  }));

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- deep edits of cloned fixtures
export type Editable = any;

/** The first prod RayJob, and its Ray cluster as a RayCluster and as a RayService: each passes every Ray rule. */
export function rayObjects(): Record<RayKind, PolicyInput> {
  const job = renderedProd().find((r) => r.type === RAY_TYPES.RayJob)!;
  const spec = (job.props as Editable).spec.rayClusterSpec;
  const metadata = { name: "ray", namespace: (job.props as Editable).metadata.namespace };
  return {
    RayJob: job,
    RayCluster: { type: RAY_TYPES.RayCluster, name: "ray", props: { metadata, spec } },
    RayService: { type: RAY_TYPES.RayService, name: "ray", props: { metadata, spec: { rayClusterConfig: spec } } },
  };
}

/** A clone of `base` with `edit` applied to its props (a JSON copy: rendered pods share objects, a clone would too). */
export function edited(base: PolicyInput, edit: (props: Editable) => void): PolicyInput {
  const clone = JSON.parse(JSON.stringify(base)) as PolicyInput & { props: Editable };
  edit(clone.props);
  return clone;
}

/** A bad input: the one rule that must catch it, and the field path its single violation must name. */
export interface BadCase {
  /** What is wrong, as the issue names it. */
  readonly variant: string;
  readonly rule: string;
  readonly input: PolicyInput;
  /** The field path the violation names (after `<Kind> <name>: `). */
  readonly path: string;
}

/** A good input: each listed rule passes it. */
export interface GoodCase {
  readonly name: string;
  readonly rules: readonly string[];
  readonly input: PolicyInput;
}
