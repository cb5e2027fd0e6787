/**
 * The monitoring namespace's NetworkPolicies: nothing reaches its pods unless a policy here lets it. What must flow in:
 * - from the namespace's own pods, on any port: Prometheus scraping kube-state-metrics, the DCGM exporter,
 *   Alertmanager, Grafana and the operator; Grafana querying Prometheus; Prometheus alerting Alertmanager;
 * - the Prometheus Operator's admission webhook, from anywhere: the API server calls it, and EKS's control plane
 *   reaches pods through its network interfaces in the cluster's VPC (the VPC CNI gives pods VPC addresses) from
 *   addresses no selector can name, so the webhook port is open to all rather than broken.
 * Nothing else comes in from outside: Prometheus scrapes other namespaces and the nodes on its own connections (egress,
 * not restricted), `kubectl port-forward` reaches a pod over its loopback, and a node's kubelet probes its own pods,
 * which NetworkPolicies do not stop. node-exporter runs on the host network, which NetworkPolicies do not cover. Pure.
 */

/** A NetworkPolicy peer: pods by labels, in the policy's namespace. */
export interface MonitoringPeer {
  podSelector: { matchLabels?: Record<string, string> };
}

/** A NetworkPolicy of the monitoring namespace: its name and spec (the namespace and labels come with the object). */
export interface MonitoringNetworkPolicy {
  readonly name: string;
  readonly spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: "Ingress"[];
    ingress?: { from?: MonitoringPeer[]; ports?: { protocol: "TCP"; port: number }[] }[];
  };
}

/**
 * The Prometheus Operator's pods in kube-prometheus-stack 88.5.3 (`app: <chart name>-operator`,
 * templates/prometheus-operator/_prometheus-operator.tpl; the chart's own operator NetworkPolicy selects them so).
 */
export const PROMETHEUS_OPERATOR_POD_LABELS = { app: "kube-prometheus-stack-operator" } as const;

/**
 * Port the operator serves its admission webhooks on (TLS): kube-prometheus-stack's `prometheusOperator.tls.internalPort`,
 * set to this value so the policy and the chart cannot drift.
 */
export const PROMETHEUS_OPERATOR_WEBHOOK_PORT = 10250;

/** Every pod of the namespace. */
const allPods = () => ({});

/** Deny every connection in, allow the namespace's own pods, open the operator's webhook port. */
export function monitoringNetworkPolicies(): MonitoringNetworkPolicy[] {
  return [
    { name: "ray-gpu-monitoring-default-deny", spec: { podSelector: allPods(), policyTypes: ["Ingress"] } },
    {
      name: "ray-gpu-monitoring-same-namespace",
      spec: { podSelector: allPods(), policyTypes: ["Ingress"], ingress: [{ from: [{ podSelector: allPods() }] }] },
    },
    {
      name: "ray-gpu-monitoring-operator-webhook",
      spec: {
        podSelector: { matchLabels: { ...PROMETHEUS_OPERATOR_POD_LABELS } },
        policyTypes: ["Ingress"],
        ingress: [{ ports: [{ protocol: "TCP", port: PROMETHEUS_OPERATOR_WEBHOOK_PORT }] }],
      },
    },
  ];
}
