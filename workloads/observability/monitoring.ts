/**
 * The Kubernetes objects of observability, from the core's rules and dashboard: the PodMonitor that scrapes every Ray
 * pod of the namespace (the workload label copied onto its series), the stack's PrometheusRule (recording rules and
 * shared alerts), each job's PrometheusRule (thresholds from its plan) and the dashboard's ConfigMap, which Grafana's
 * sidecar loads by its label.
 */
import { DASHBOARD_LABEL, MONITORING_NAMESPACE } from "../../core/observability/charts";
import { jobDashboard, jobDashboardUid } from "../../core/observability/dashboards";
import {
  durationSeconds,
  jobRuleGroup,
  stackRuleGroup,
  type JobAlertInput,
  type StackAlertInput,
} from "../../core/observability/rules";
import type { Environment } from "../../core/config/stack";
import { ENVIRONMENT_PROFILES } from "../../core/environments";
import { stableJson } from "../../core/serialize";
import type { ConfigMap, KubeObject, PodMonitor, PrometheusRule } from "../k8s/types";

/** Ray's metrics port as KubeRay declares it on head and worker containers (`metrics`, 8080). */
export const RAY_METRICS_PORT = "metrics";
/** Name of the stack's PodMonitor and PrometheusRule in the workload namespace. */
export const STACK_MONITORING_NAME = "ray-gpu";

/** Copies a pod label onto every series scraped from the pod. */
const copyLabel = (podLabel: string, targetLabel: string) => ({
  sourceLabels: [`__meta_kubernetes_pod_label_${podLabel.replace(/[^A-Za-z0-9_]/g, "_")}`],
  targetLabel,
  action: "replace" as const,
});

/** Every Ray head and worker pod of the namespace that ray-gpu rendered, every 15 s. */
export function rayPodMonitor(namespace: string, labels: Record<string, string>): PodMonitor {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PodMonitor",
    metadata: { name: STACK_MONITORING_NAME, namespace, labels },
    spec: {
      selector: {
        matchLabels: labels,
        matchExpressions: [{ key: "ray.io/node-type", operator: "In", values: ["head", "worker"] }],
      },
      podMetricsEndpoints: [
        {
          port: RAY_METRICS_PORT,
          path: "/metrics",
          interval: "15s",
          relabelings: [
            copyLabel("ray-gpu.io/workload", "workload"),
            copyLabel("ray.io/node-type", "ray_node_type"),
            copyLabel("ray.io/cluster", "ray_io_cluster"),
          ],
        },
      ],
    },
  };
}

/** The stack's rules: recording rules that attribute GPUs to jobs, and the alerts every job shares. */
export function stackPrometheusRule(a: StackAlertInput, labels: Record<string, string>): PrometheusRule {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: { name: STACK_MONITORING_NAME, namespace: a.namespace, labels },
    spec: { groups: [stackRuleGroup(a)] },
  };
}

/** One job's alerts, named after the job: a change to the job changes only its own rule. */
export function jobPrometheusRule(j: JobAlertInput, labels: Record<string, string>): PrometheusRule {
  return {
    apiVersion: "monitoring.coreos.com/v1",
    kind: "PrometheusRule",
    metadata: { name: `${j.workload}-alerts`, namespace: j.namespace, labels },
    spec: { groups: [jobRuleGroup(j)] },
  };
}

/** The jobs dashboard of a workload namespace, as a ConfigMap in the monitoring namespace. */
export function dashboardConfigMap(workloadNamespace: string, labels: Record<string, string>): ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `ray-gpu-dashboard-${workloadNamespace}`,
      namespace: MONITORING_NAMESPACE,
      labels: { ...labels, ...DASHBOARD_LABEL },
    },
    data: { [`${jobDashboardUid(workloadNamespace)}.json`]: stableJson(jobDashboard(workloadNamespace)) },
  };
}

/** The namespace's PodMonitor, the stack's rules (the autoscaler's scale-down time from the environment) and the dashboard. */
export function monitoringObjects(
  namespace: string,
  environment: Environment,
  labels: Record<string, string>,
): KubeObject[] {
  const scaleDown = durationSeconds(ENVIRONMENT_PROFILES[environment].platform.scaleDownUnneededTime);
  return [
    rayPodMonitor(namespace, labels),
    stackPrometheusRule({ namespace, scaleDownUnneededSeconds: scaleDown }, labels),
    dashboardConfigMap(namespace, labels),
  ];
}
