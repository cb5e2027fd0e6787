/**
 * The stack rule: every namespace that runs Ray pods (a RayJob, RayCluster or RayService) has a default-deny
 * NetworkPolicy. Only a policy that selects every pod of the namespace, denies both ways and allows nothing counts;
 * one whose selector picks some pods (or none) leaves the rest open. Pure.
 */
import { arr, kindOf, nonEmpty, obj, type Obj, type PolicyInput } from "./inputs";
import { isRayType } from "./ray-pods";

const NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy";

/** A namespaced object's namespace (Kubernetes' `default` when none is set). */
const namespaceOf = (r: PolicyInput) => String(obj(r.props["metadata"])["namespace"] ?? "default");

/** Why a NetworkPolicy spec is not a default deny of all pods both ways; empty when it is one. */
export function notDefaultDeny(spec: Obj): string[] {
  const selector = obj(spec["podSelector"]);
  const types = arr(spec["policyTypes"]);
  return [
    nonEmpty(selector["matchLabels"]) || nonEmpty(selector["matchExpressions"])
      ? "podSelector selects only some pods (a default deny has podSelector: {})"
      : "",
    ...(["Ingress", "Egress"] as const).map((t) => (types.includes(t) ? "" : `policyTypes lacks ${t}`)),
    nonEmpty(spec["ingress"]) ? "ingress rules allow traffic in" : "",
    nonEmpty(spec["egress"]) ? "egress rules allow traffic out" : "",
  ].filter(Boolean);
}

/** Deny-only policies of a namespace (no rules) that fall short of a default deny, with why: what a reader fixes. */
function nearMisses(resources: readonly PolicyInput[], ns: string): string[] {
  return resources
    .filter((r) => r.type === NETWORK_POLICY && namespaceOf(r) === ns)
    .map((r) => ({ r, spec: obj(r.props["spec"]) }))
    .filter(({ spec }) => !nonEmpty(spec["ingress"]) && !nonEmpty(spec["egress"]))
    .map(({ r, spec }) => `NetworkPolicy ${r.name} does not count: ${notDefaultDeny(spec).join(", ")}`);
}

/**
 * Stack rule: every namespace that runs Ray pods has a default-deny NetworkPolicy (podSelector `{}`, policyTypes
 * Ingress and Egress, no rules). One violation per namespace, naming the Ray resources there.
 */
export function networkPolicyViolations(resources: readonly PolicyInput[]): string[] {
  const denied = new Set(
    resources
      .filter((r) => r.type === NETWORK_POLICY && notDefaultDeny(obj(r.props["spec"])).length === 0)
      .map(namespaceOf),
  );
  const byNamespace = new Map<string, string[]>();
  for (const r of resources.filter((x) => isRayType(x.type)))
    byNamespace.set(namespaceOf(r), [...(byNamespace.get(namespaceOf(r)) ?? []), `${kindOf(r.type)} ${r.name}`]);
  return [...byNamespace]
    .filter(([ns]) => !denied.has(ns))
    .map(([ns, runs]) =>
      [
        `namespace ${ns} runs Ray pods (${runs.join(", ")}) without a default-deny NetworkPolicy`,
        ...nearMisses(resources, ns),
        "add one with spec.podSelector: {}, spec.policyTypes: [Ingress, Egress] and no ingress or egress rules",
      ].join("; "),
    );
}
