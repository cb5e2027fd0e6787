/**
 * kube-prometheus-stack's RBAC, made by the platform instead of the chart, so that nothing of it reads Secrets
 * cluster-wide. Chart 88.5.3 grants its Prometheus Operator `configmaps` and `secrets` (`*`) and `statefulsets` (`*`)
 * in a ClusterRole with no value that narrows it (templates/prometheus-operator/clusterrole.yaml); its only switch is
 * `global.rbac.create`, which also drops Prometheus's ClusterRole and the admission webhook job's roles. The platform
 * sets it false and grants the same rules itself ({@link prometheusStackRbac}): the operator's namespaced rules in a
 * Role in each namespace it watches (`--namespaces`: monitoring and the workload namespace, where its informers list
 * and watch), the rest in a ClusterRole as the chart has them. This is the split the operator's maintainers point to
 * (prometheus-operator issues #2064, #3544: "limit this with the --namespaces flag"). Every rule is the chart's: a
 * test reads the vendored templates and checks that the union of ours is theirs
 * (test/core/observability/operator-rbac.test.ts).
 *
 * The service accounts are the chart's, named through `fullnameOverride` (`kube-prometheus-stack`, the names of
 * `helm install kube-prometheus-stack`), since the admission job's account has no name value of its own. Pure.
 */
import { ADDON_NAMESPACES } from "../platform/namespaces";

/** kube-prometheus-stack's `fullnameOverride`: the prefix of every object the chart names. */
export const PROMETHEUS_STACK_FULLNAME = "kube-prometheus-stack";

/** A Kubernetes RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface RbacRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly nonResourceURLs?: readonly string[];
  readonly verbs: readonly string[];
}

/** A role the platform binds to one of the chart's service accounts: cluster-wide, or in each named namespace. */
export interface RbacGrant {
  /** The role's (and its binding's) name. */
  readonly name: string;
  /** `cluster`: a ClusterRole and ClusterRoleBinding; `namespaced`: a Role and RoleBinding in each of `namespaces`. */
  readonly scope: "cluster" | "namespaced";
  readonly namespaces: readonly string[];
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  readonly rules: readonly RbacRule[];
  /** Why the grant is needed, and where in the chart it comes from. */
  readonly reason: string;
}

/** The chart's service accounts, by component (`kube-prometheus-stack.*.serviceAccountName` with the override). */
export const PROMETHEUS_STACK_ACCOUNTS = {
  operator: `${PROMETHEUS_STACK_FULLNAME}-operator`,
  admission: `${PROMETHEUS_STACK_FULLNAME}-admission`,
} as const;

const CORE = "";
const ALL = ["*"];
const READ = ["get", "list", "watch"];

/** The operator's custom resources (templates/prometheus-operator/clusterrole.yaml, first rule). */
const MONITORING_RESOURCES = ["alertmanagers", "prometheuses", "prometheusagents", "thanosrulers"]
  .flatMap((r) => [r, `${r}/finalizers`, `${r}/status`])
  .concat(["alertmanagerconfigs", "scrapeconfigs", "scrapeconfigs/status", "servicemonitors", "servicemonitors/status"])
  .concat([
    "podmonitors",
    "podmonitors/status",
    "probes",
    "probes/status",
    "prometheusrules",
    "prometheusrules/status",
  ]);

/** The operator's rules that act on cluster-scoped objects or outside the watched namespaces (the kubelet Service). */
const OPERATOR_CLUSTER_RULES: readonly RbacRule[] = [
  { apiGroups: ["monitoring.coreos.com"], resources: MONITORING_RESOURCES, verbs: ALL },
  { apiGroups: [CORE], resources: ["pods"], verbs: ["list", "delete"] },
  {
    apiGroups: [CORE],
    resources: ["services", "services/finalizers", "endpoints"],
    verbs: ["get", "create", "update", "delete"],
  },
  { apiGroups: [CORE], resources: ["nodes"], verbs: ["list", "watch"] },
  { apiGroups: [CORE], resources: ["namespaces"], verbs: READ },
  { apiGroups: [CORE, "events.k8s.io"], resources: ["events"], verbs: ["patch", "create"] },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: READ },
  { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get"] },
  {
    apiGroups: ["discovery.k8s.io"],
    resources: ["endpointslices"],
    verbs: ["get", "create", "list", "watch", "update", "delete"],
  },
];

/** The operator's rules over what it creates for a Prometheus or Alertmanager: their StatefulSets, config and rules. */
const OPERATOR_NAMESPACED_RULES: readonly RbacRule[] = [
  { apiGroups: ["apps"], resources: ["statefulsets"], verbs: ALL },
  { apiGroups: [CORE], resources: ["configmaps", "secrets"], verbs: ALL },
];

/** Prometheus's service discovery and the kubelet's metrics (templates/prometheus/clusterrole.yaml, our values). */
const PROMETHEUS_RULES: readonly RbacRule[] = [
  { apiGroups: [CORE], resources: ["nodes", "nodes/metrics", "services", "endpoints", "pods"], verbs: READ },
  { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: READ },
  { apiGroups: ["networking.k8s.io"], resources: ["ingresses"], verbs: READ },
  { nonResourceURLs: ["/metrics", "/metrics/cadvisor"], verbs: ["get"] },
];

/**
 * Every role kube-prometheus-stack needs, for a Prometheus Operator that watches `monitoring` and `workloadNamespace`.
 * @param prometheusServiceAccount - Prometheus's service account (the chart's `prometheus.serviceAccount.name`).
 */
export function prometheusStackRbac(workloadNamespace: string, prometheusServiceAccount: string): RbacGrant[] {
  const monitoring = ADDON_NAMESPACES.monitoring;
  const account = (name: string) => ({ namespace: monitoring, name });
  const operator = account(PROMETHEUS_STACK_ACCOUNTS.operator);
  const admission = account(PROMETHEUS_STACK_ACCOUNTS.admission);
  const webhooks = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"];
  return [
    {
      name: "ray-gpu-prometheus-operator",
      scope: "cluster",
      namespaces: [],
      serviceAccount: operator,
      rules: OPERATOR_CLUSTER_RULES,
      reason: "the chart's operator ClusterRole less StatefulSets, ConfigMaps and Secrets",
    },
    {
      name: "ray-gpu-prometheus-operator-namespaced",
      scope: "namespaced",
      namespaces: [monitoring, workloadNamespace],
      serviceAccount: operator,
      rules: OPERATOR_NAMESPACED_RULES,
      reason: "the operator writes StatefulSets and config Secrets and reads rule ConfigMaps where it watches",
    },
    {
      name: "ray-gpu-prometheus",
      scope: "cluster",
      namespaces: [],
      serviceAccount: account(prometheusServiceAccount),
      rules: PROMETHEUS_RULES,
      reason: "Prometheus discovers pods, services and nodes in every namespace and scrapes the kubelets",
    },
    {
      name: "ray-gpu-prometheus-admission",
      scope: "cluster",
      namespaces: [],
      serviceAccount: admission,
      rules: [
        {
          apiGroups: ["admissionregistration.k8s.io"],
          resources: webhooks,
          resourceNames: [PROMETHEUS_STACK_ACCOUNTS.admission],
          verbs: ["get", "update", "patch"],
        },
      ],
      reason: "the admission job patches its webhook configurations' CA bundle (the chart's, narrowed to their name)",
    },
    {
      name: "ray-gpu-prometheus-admission",
      scope: "namespaced",
      namespaces: [monitoring],
      serviceAccount: admission,
      rules: [{ apiGroups: [CORE], resources: ["secrets"], verbs: ["get", "create"] }],
      reason: "the admission job creates the webhook's certificate Secret in monitoring",
    },
  ];
}
