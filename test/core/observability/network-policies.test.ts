/**
 * What the monitoring namespace's NetworkPolicies let in, evaluated as Kubernetes does for ingress (a pod selected by a
 * policy of type Ingress is isolated; a connection passes when one of those policies' rules admits its source and
 * port; a rule without `from` admits every source, without `ports` every port): its own pods reach each other on any
 * port, the API server reaches the operator's webhook, and nothing else gets in.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { MONITORING_NAMESPACE, planObservability } from "../../../core/observability/charts";
import {
  monitoringNetworkPolicies,
  PROMETHEUS_OPERATOR_POD_LABELS,
  PROMETHEUS_OPERATOR_WEBHOOK_PORT,
  type MonitoringNetworkPolicy,
} from "../../../core/observability/network";
import { ObservabilitySchema } from "../../../core/config/observability";
import { valueAt } from "../../helpers/helm-values";

const KPS = resolve(__dirname, "../../fixtures/kube-prometheus-stack-88.5.3");

/** A connection's source: a pod (by namespace and labels), or an address outside every namespace (the API server). */
type Source = { readonly namespace: string; readonly labels: Record<string, string> } | "outside";
interface Pod {
  readonly namespace: string;
  readonly labels: Record<string, string>;
}

const selects = (selector: { matchLabels?: Record<string, string> }, labels: Record<string, string>) =>
  Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/** Whether the monitoring namespace's policies let `from` reach `to` (a pod of monitoring) on TCP `port`. */
function admits(policies: readonly MonitoringNetworkPolicy[], from: Source, to: Pod, port: number): boolean {
  const own = policies.filter((p) => p.spec.policyTypes.includes("Ingress") && selects(p.spec.podSelector, to.labels));
  if (own.length === 0) return true;
  return own.some((p) =>
    (p.spec.ingress ?? []).some((rule) => {
      const portOk = !rule.ports || rule.ports.some((r) => r.protocol === "TCP" && r.port === port);
      // a peer with only a podSelector names pods of the policy's own namespace
      const sourceOk =
        !rule.from ||
        (from !== "outside" &&
          from.namespace === to.namespace &&
          rule.from.some((peer) => selects(peer.podSelector, from.labels)));
      return portOk && sourceOk;
    }),
  );
}

const monitoring = (labels: Record<string, string>): Pod => ({ namespace: MONITORING_NAMESPACE, labels });
const prometheus = monitoring({ "app.kubernetes.io/name": "prometheus" });
const grafana = monitoring({ "app.kubernetes.io/name": "grafana" });
const kubeStateMetrics = monitoring({ "app.kubernetes.io/name": "kube-state-metrics" });
const dcgmExporter = monitoring({ "app.kubernetes.io/name": "dcgm-exporter" });
const alertmanager = monitoring({ "app.kubernetes.io/name": "alertmanager" });
const operator = monitoring({
  ...PROMETHEUS_OPERATOR_POD_LABELS,
  "app.kubernetes.io/component": "prometheus-operator",
});
const rayHead: Source = { namespace: "ray-jobs", labels: { "ray.io/node-type": "head", "ray.io/is-ray-node": "yes" } };

describe("network isolation of the monitoring namespace", () => {
  const policies = planObservability(ObservabilitySchema.parse({}), "system", "create")!.networkPolicies;

  it("is the plan's: a default deny of ingress to every pod, and two allows", () => {
    expect(policies).toEqual(monitoringNetworkPolicies());
    const deny = policies.find((p) => p.name === "ray-gpu-monitoring-default-deny")!;
    expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress"] });
    expect(policies.map((p) => [p.name, p.spec.podSelector])).toEqual([
      ["ray-gpu-monitoring-default-deny", {}],
      ["ray-gpu-monitoring-same-namespace", {}],
      ["ray-gpu-monitoring-operator-webhook", { matchLabels: { app: "kube-prometheus-stack-operator" } }],
    ]);
  });

  it.each([
    ["Prometheus scrapes kube-state-metrics", prometheus, kubeStateMetrics, 8080],
    ["Prometheus scrapes the DCGM exporter", prometheus, dcgmExporter, 9400],
    ["Prometheus alerts Alertmanager", prometheus, alertmanager, 9093],
    ["Grafana queries Prometheus", grafana, prometheus, 9090],
    ["Prometheus scrapes the operator", prometheus, operator, PROMETHEUS_OPERATOR_WEBHOOK_PORT],
  ] as const)("lets in its own pods: %s", (_, from, to, port) => {
    expect(admits(policies, from, to, port)).toBe(true);
  });

  it("lets the API server (from outside every namespace) reach the operator's webhook, and only that port", () => {
    expect(admits(policies, "outside", operator, PROMETHEUS_OPERATOR_WEBHOOK_PORT)).toBe(true);
    expect(admits(policies, "outside", operator, 8080)).toBe(false);
  });

  it.each([
    ["Grafana's UI", grafana, 3000],
    ["Prometheus", prometheus, 9090],
    ["Alertmanager", alertmanager, 9093],
    ["the DCGM exporter", dcgmExporter, 9400],
  ] as const)("keeps %s from Ray pods and from outside", (_, to, port) => {
    expect(admits(policies, rayHead, to, port)).toBe(false);
    expect(admits(policies, "outside", to, port)).toBe(false);
  });

  it("opens the port the chart serves the webhook on: our value, the pinned chart's default", () => {
    const values = planObservability(ObservabilitySchema.parse({}), "system", "create")!.helm.kubePrometheusStack
      .values;
    expect(valueAt(values, ["prometheusOperator", "tls", "internalPort"])).toBe(PROMETHEUS_OPERATOR_WEBHOOK_PORT);
    const chart = parse(readFileSync(join(KPS, "values.yaml"), "utf8")) as unknown;
    expect(valueAt(chart, ["prometheusOperator", "tls"])).toMatchObject({ enabled: true, internalPort: 10250 });
    expect(valueAt(chart, ["prometheusOperator", "admissionWebhooks", "deployment", "enabled"])).toBe(false);
  });
});
