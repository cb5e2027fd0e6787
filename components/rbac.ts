/**
 * Roles and their bindings from the plan's {@link RbacGrant}s (`core/observability/operator-rbac.ts`): a ClusterRole and
 * ClusterRoleBinding for a cluster-wide grant, a Role and RoleBinding in each namespace of a namespaced one.
 */
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { RbacGrant, RbacRule } from "../core/observability/operator-rbac";
import { MANAGED_BY } from "../workloads/k8s/labels";

const RBAC_GROUP = "rbac.authorization.k8s.io";
/** A plan rule as the provider's input: the same fields, mutable copies of each list. */
const rulesOf = (rules: readonly RbacRule[]): k8s.types.input.rbac.v1.PolicyRule[] =>
  rules.map((r) => ({
    ...(r.apiGroups ? { apiGroups: [...r.apiGroups] } : {}),
    ...(r.resources ? { resources: [...r.resources] } : {}),
    ...(r.resourceNames ? { resourceNames: [...r.resourceNames] } : {}),
    ...(r.nonResourceURLs ? { nonResourceURLs: [...r.nonResourceURLs] } : {}),
    verbs: [...r.verbs],
  }));

/** The roles and bindings of `grants`; a release that runs as those accounts depends on all of them. */
export function createRbacGrants(
  prefix: string,
  grants: readonly RbacGrant[],
  opts: pulumi.CustomResourceOptions,
): pulumi.Resource[] {
  return grants.flatMap((g) =>
    g.scope === "cluster" ? clusterGrant(prefix, g, opts) : namespacedGrant(prefix, g, opts),
  );
}

function subjectOf(g: RbacGrant) {
  return [{ kind: "ServiceAccount", name: g.serviceAccount.name, namespace: g.serviceAccount.namespace }];
}

function clusterGrant(prefix: string, g: RbacGrant, opts: pulumi.CustomResourceOptions): pulumi.Resource[] {
  const metadata = { name: g.name, labels: { ...MANAGED_BY } };
  const role = new k8s.rbac.v1.ClusterRole(
    `${prefix}-${g.name}-clusterrole`,
    { metadata, rules: rulesOf(g.rules) },
    opts,
  );
  const binding = new k8s.rbac.v1.ClusterRoleBinding(
    `${prefix}-${g.name}-clusterrolebinding`,
    { metadata, roleRef: { apiGroup: RBAC_GROUP, kind: "ClusterRole", name: g.name }, subjects: subjectOf(g) },
    opts,
  );
  return [role, binding];
}

function namespacedGrant(prefix: string, g: RbacGrant, opts: pulumi.CustomResourceOptions): pulumi.Resource[] {
  return g.namespaces.flatMap((namespace) => {
    const metadata = { name: g.name, namespace, labels: { ...MANAGED_BY } };
    const role = new k8s.rbac.v1.Role(
      `${prefix}-${g.name}-${namespace}-role`,
      { metadata, rules: rulesOf(g.rules) },
      opts,
    );
    const binding = new k8s.rbac.v1.RoleBinding(
      `${prefix}-${g.name}-${namespace}-rolebinding`,
      { metadata, roleRef: { apiGroup: RBAC_GROUP, kind: "Role", name: g.name }, subjects: subjectOf(g) },
      opts,
    );
    return [role, binding];
  });
}
