/**
 * The observability add-ons as pinned Helm charts with their values: NVIDIA's DCGM exporter on the GPU nodes and
 * kube-prometheus-stack (Prometheus Operator, Prometheus, kube-state-metrics, Alertmanager, Grafana) on the CPU pool.
 * Every key set here exists in the chart's own values file (test/fixtures/<chart>-<version>/values.yaml; the tests
 * check it). Pure.
 *
 * Pins and sources:
 * - dcgm-exporter 4.8.2 (app 4.5.3-4.8.2; https://nvidia.github.io/dcgm-exporter/helm-charts, NVIDIA/dcgm-exporter tag
 *   4.5.3-4.8.2, commit 691c927). Pod attribution is on in every release (`DCGM_EXPORTER_KUBERNETES=true`, the
 *   kubelet's pod-resources socket mounted: deployment/templates/daemonset.yaml): each GPU's series carry the
 *   namespace, pod and container holding it. Its ServiceMonitor keeps those labels only with `honorLabels: true`
 *   (Prometheus would rename them `exported_*` otherwise).
 * - kube-prometheus-stack 88.5.3 (Prometheus Operator v0.93.1; https://prometheus-community.github.io/helm-charts,
 *   tag kube-prometheus-stack-88.5.3, commit ea930ba), with kube-state-metrics 8.4.0. Its Prometheus selects only
 *   monitors and rules labelled `release: <release>` unless the `*SelectorNilUsesHelmValues` keys are false
 *   (templates/prometheus/prometheus.yaml), so they are false here: our PodMonitors and PrometheusRules are found
 *   without knowing the release's generated name. Its Grafana subchart is grafana 12.11.1
 *   (https://grafana-community.github.io/helm-charts, tag grafana-12.11.1, commit 864f779): `rbac.namespaced` is a key
 *   of that chart's values.yaml which kube-prometheus-stack's grafana block does not repeat.
 */
import type { ObservabilityConfig } from "../config/observability";
import { AMP_REMOTE_WRITE } from "../config/observability";
import { GPU_TAINT, POOL_LABEL, ROLE_LABEL } from "../pools";
import type { HelmReleasePlan } from "../platform/addons";
import { ADDON_NAMESPACES } from "../platform/namespaces";
import { KSM_LABEL_ALLOWLIST } from "./metrics";
import { DCGM_EXPORTER_REQUESTS } from "../catalog/daemonsets";
import { monitoringNetworkPolicies, PROMETHEUS_OPERATOR_WEBHOOK_PORT, type MonitoringNetworkPolicy } from "./network";
import {
  PROMETHEUS_STACK_ACCOUNTS,
  PROMETHEUS_STACK_FULLNAME,
  prometheusStackRbac,
  type RbacGrant,
} from "./operator-rbac";

/** The observability charts, pinned. */
export const OBSERVABILITY_CHARTS = {
  dcgmExporter: {
    chart: "dcgm-exporter",
    version: "4.8.2",
    repo: "https://nvidia.github.io/dcgm-exporter/helm-charts",
  },
  kubePrometheusStack: {
    chart: "kube-prometheus-stack",
    version: "88.5.3",
    repo: "https://prometheus-community.github.io/helm-charts",
  },
} as const;

/** Namespace of Prometheus, Grafana and the exporters; labelled so that it may scrape the Ray pods' metrics port. */
export const MONITORING_NAMESPACE = ADDON_NAMESPACES.monitoring;
/** Service account of Prometheus (fixed, so Pod Identity can bind the remote-write role to it). */
export const PROMETHEUS_SERVICE_ACCOUNT = "prometheus";
/** Label and value the Grafana sidecar loads dashboards from (the chart's `grafana.sidecar.dashboards`). */
export const DASHBOARD_LABEL = { grafana_dashboard: "1" } as const;
/**
 * Grafana's admin login: a Secret in the monitoring namespace that the platform fills with a random password (a Pulumi
 * secret), named in the chart's `grafana.admin.existingSecret`; the chart then creates no password of its own.
 */
export const GRAFANA_ADMIN = {
  secretName: "ray-gpu-grafana-admin",
  user: "admin",
  userKey: "admin-user",
  passwordKey: "admin-password",
} as const;
/** Share of the volume Prometheus may fill before it drops old blocks (`retentionSize`): room for the WAL. */
export const RETENTION_SIZE_SHARE = 0.85;
/** StorageClass of Prometheus's volume on a cluster the stack creates (EBS CSI driver, gp3, encrypted). */
export const PROMETHEUS_STORAGE_CLASS = "ray-gpu-gp3";

/** Where samples go: the embedded Prometheus only, or also an Amazon Managed Service for Prometheus workspace. */
export type RemoteWritePlan =
  | { readonly kind: "amp"; readonly url: string; readonly region: string; readonly workspaceId: string }
  | { readonly kind: "https"; readonly url: string };

/** The observability plan of a stack. */
export interface ObservabilityPlan {
  readonly namespace: string;
  readonly retentionDays: number;
  readonly storageGiB: number;
  /** Undefined: keep Grafana in the cluster. */
  readonly remoteWrite: RemoteWritePlan | undefined;
  /** The StorageClass of Prometheus's volume; undefined: the cluster's default class (an adopted cluster). */
  readonly storageClass: string | undefined;
  /** Grafana's admin Secret; undefined: no Grafana (remote write). */
  readonly grafanaAdmin: typeof GRAFANA_ADMIN | undefined;
  /** The monitoring namespace's NetworkPolicies (`core/observability/network.ts`). */
  readonly networkPolicies: readonly MonitoringNetworkPolicy[];
  readonly helm: { readonly dcgmExporter: HelmReleasePlan; readonly kubePrometheusStack: HelmReleasePlan };
  /**
   * The roles of kube-prometheus-stack's service accounts, made by the platform instead of the chart
   * (./operator-rbac.ts); empty when the operator watches every namespace and the chart makes its own.
   */
  readonly rbac: readonly RbacGrant[];
}

function remoteWritePlan(url: string | undefined): RemoteWritePlan | undefined {
  if (url === undefined) return undefined;
  const amp = AMP_REMOTE_WRITE.exec(url);
  return amp ? { kind: "amp", url, region: amp[1]!, workspaceId: amp[2]! } : { kind: "https", url };
}

/** DCGM exporter on every GPU node (tolerating the GPU taint), scraped through its ServiceMonitor. */
export function dcgmExporterRelease(namespace: string): HelmReleasePlan {
  return {
    ...OBSERVABILITY_CHARTS.dcgmExporter,
    namespace,
    values: {
      nodeSelector: { [ROLE_LABEL]: "gpu" },
      tolerations: [{ key: GPU_TAINT.key, operator: "Exists", effect: GPU_TAINT.effect }],
      serviceMonitor: { enabled: true, interval: "15s", honorLabels: true },
      resources: {
        requests: { cpu: `${DCGM_EXPORTER_REQUESTS.cpuMillis}m`, memory: `${DCGM_EXPORTER_REQUESTS.memoryMiB}Mi` },
        limits: { memory: "512Mi" },
      },
    },
  };
}

/** Prometheus's `prometheusSpec`: where it runs, how long and how much it keeps, what it selects, where it writes. */
function prometheusSpec(c: ObservabilityConfig, cpuPool: string, storageClass: string | undefined) {
  const remote = remoteWritePlan(c.remoteWrite?.url);
  return {
    nodeSelector: { [POOL_LABEL]: cpuPool },
    retention: `${c.retentionDays}d`,
    retentionSize: `${Math.floor(c.storageGiB * RETENTION_SIZE_SHARE)}GiB`,
    // The operator copies it to the StatefulSet (prometheus-operator v0.93 pkg/prometheus/server/statefulset.go): the
    // claim, and with a Delete StorageClass its EBS volume, go when the release does (`core/platform/destroy.ts`).
    persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete", whenScaled: "Retain" },
    storageSpec: {
      volumeClaimTemplate: {
        spec: {
          ...(storageClass ? { storageClassName: storageClass } : {}),
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: `${c.storageGiB}Gi` } },
        },
      },
    },
    podMonitorSelectorNilUsesHelmValues: false,
    serviceMonitorSelectorNilUsesHelmValues: false,
    ruleSelectorNilUsesHelmValues: false,
    remoteWrite: remote
      ? [{ url: remote.url, ...(remote.kind === "amp" ? { sigv4: { region: remote.region } } : {}) }]
      : [],
    resources: { requests: { cpu: "500m", memory: "2Gi" }, limits: { memory: "4Gi" } },
  };
}

/**
 * Control-plane parts kube-prometheus-stack scrapes by default and EKS hides, each with why. Left on, their `*Down`
 * alerts (`absent(up{job=...})`) and `KubeProxyInstanceUnreachable` fire from the first minute and never clear.
 * `<key>.enabled: false` removes both the scrape objects and the rule file (the chart's
 * templates/prometheus/rules-1.14/*.yaml are gated on it).
 */
export const EKS_HIDDEN_COMPONENTS = {
  kubeControllerManager: "runs in the EKS control plane, which exposes no scrape target for it",
  kubeScheduler: "runs in the EKS control plane, which exposes no scrape target for it",
  kubeEtcd: "EKS's etcd is managed and not reachable from the cluster",
  kubeProxy: "the EKS kube-proxy add-on binds its metrics to 127.0.0.1, which Prometheus cannot reach",
} as const;

/**
 * What kube-prometheus-stack's operator and kube-state-metrics may see of the cluster's Secrets. kube-state-metrics
 * runs without its `secrets` collector (`collectorsExclude`), so its ClusterRole has no Secrets rule (kube-state-metrics
 * 8.4.0 templates/role.yaml: `if has "secrets" $activeCollectors`); nothing of ours reads `kube_secret_*`. The
 * operator watches only the namespaces it serves (`--namespaces`, from `prometheusOperator.namespaces`: monitoring, and
 * the workload namespace where the Ray PodMonitor and the rules are; templates/prometheus-operator/deployment.yaml),
 * and the chart makes no RBAC (`global.rbac.create: false`): the platform grants the chart's rules itself, the
 * operator's Secrets, ConfigMaps and StatefulSets in a Role in each watched namespace (./operator-rbac.ts). Without a
 * workload namespace the operator watches every namespace with the chart's own ClusterRole.
 */
function secretScope(workloadNamespace: string | undefined) {
  return {
    operatorNamespaces: workloadNamespace
      ? { namespaces: { releaseNamespace: true, additional: [workloadNamespace] } }
      : {},
    chartRbac: workloadNamespace ? { global: { rbac: { create: false } } } : {},
    kubeStateMetrics: { collectorsExclude: ["secrets"] },
  };
}

/**
 * kube-prometheus-stack on the CPU pool; Grafana only when samples stay in the cluster. With `workloadNamespace`, the
 * operator watches it and monitoring only (otherwise every namespace: the chart's default).
 */
export function kubePrometheusStackRelease(
  c: ObservabilityConfig,
  cpuPool: string,
  storageClass: string | undefined,
  workloadNamespace?: string,
): HelmReleasePlan {
  const onCpuPool = { nodeSelector: { [POOL_LABEL]: cpuPool } };
  const scope = secretScope(workloadNamespace);
  return {
    ...OBSERVABILITY_CHARTS.kubePrometheusStack,
    namespace: MONITORING_NAMESPACE,
    values: {
      fullnameOverride: PROMETHEUS_STACK_FULLNAME,
      ...scope.chartRbac,
      prometheus: {
        serviceAccount: { create: true, name: PROMETHEUS_SERVICE_ACCOUNT },
        prometheusSpec: prometheusSpec(c, cpuPool, storageClass),
      },
      prometheusOperator: {
        ...onCpuPool,
        tls: { internalPort: PROMETHEUS_OPERATOR_WEBHOOK_PORT },
        serviceAccount: { create: true, name: PROMETHEUS_STACK_ACCOUNTS.operator },
        ...scope.operatorNamespaces,
      },
      alertmanager: { alertmanagerSpec: onCpuPool },
      "kube-state-metrics": {
        ...onCpuPool,
        metricLabelsAllowlist: [...KSM_LABEL_ALLOWLIST],
        ...scope.kubeStateMetrics,
      },
      ...Object.fromEntries(Object.keys(EKS_HIDDEN_COMPONENTS).map((k) => [k, { enabled: false }])),
      grafana: grafanaValues(c.remoteWrite === undefined),
    },
  };
}

/**
 * Grafana: its admin login from {@link GRAFANA_ADMIN} (no chart-made password), and sidecars that read ConfigMaps and
 * Secrets of the monitoring namespace only, where every dashboard of ours is (`workloads/observability/monitoring.ts`):
 * `searchNamespace` names it (the chart's default is ALL) and `rbac.namespaced` gives Grafana a Role there instead of a
 * ClusterRole that reads every Secret of the cluster (grafana 12.11.1 templates/clusterrole.yaml, role.yaml).
 */
function grafanaValues(enabled: boolean) {
  const { secretName, userKey, passwordKey } = GRAFANA_ADMIN;
  return {
    enabled,
    admin: { existingSecret: secretName, userKey, passwordKey },
    rbac: { namespaced: true },
    sidecar: {
      dashboards: { enabled: true, label: "grafana_dashboard", labelValue: "1", searchNamespace: MONITORING_NAMESPACE },
    },
  };
}

/**
 * Plans the observability add-ons, or undefined when `observability.enabled` is false. `workloadNamespace`: the
 * namespace the Prometheus Operator watches beside monitoring (@default - every namespace).
 */
export function planObservability(
  c: ObservabilityConfig,
  cpuPool: string,
  clusterMode: "create" | "existing",
  workloadNamespace?: string,
): ObservabilityPlan | undefined {
  if (!c.enabled) return undefined;
  const storageClass = clusterMode === "create" ? PROMETHEUS_STORAGE_CLASS : undefined;
  return {
    namespace: MONITORING_NAMESPACE,
    retentionDays: c.retentionDays,
    storageGiB: c.storageGiB,
    remoteWrite: remoteWritePlan(c.remoteWrite?.url),
    storageClass,
    grafanaAdmin: c.remoteWrite === undefined ? GRAFANA_ADMIN : undefined,
    networkPolicies: monitoringNetworkPolicies(),
    rbac: workloadNamespace ? prometheusStackRbac(workloadNamespace, PROMETHEUS_SERVICE_ACCOUNT) : [],
    helm: {
      dcgmExporter: dcgmExporterRelease(MONITORING_NAMESPACE),
      kubePrometheusStack: kubePrometheusStackRelease(c, cpuPool, storageClass, workloadNamespace),
    },
  };
}

/**
 * The EBS CSI driver (EKS add-on `aws-ebs-csi-driver`) that provisions Prometheus's volume on a cluster the stack
 * creates, with the managed policy and service account of the EKS user guide ("Store Kubernetes volumes with Amazon
 * EBS"), bound through Pod Identity.
 */
export const EBS_CSI = {
  addon: "aws-ebs-csi-driver",
  serviceAccount: { namespace: ADDON_NAMESPACES.kubeSystem, name: "ebs-csi-controller-sa" },
  managedPolicyArn: "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy",
  provisioner: "ebs.csi.aws.com",
} as const;

/** The gp3 StorageClass of Prometheus's volume: encrypted, bound where the pod lands, expandable. */
export function prometheusStorageClass(labels: Record<string, string>) {
  return {
    metadata: { name: PROMETHEUS_STORAGE_CLASS, labels },
    provisioner: EBS_CSI.provisioner,
    parameters: { type: "gp3", encrypted: "true" },
    volumeBindingMode: "WaitForFirstConsumer",
    reclaimPolicy: "Delete",
    allowVolumeExpansion: true,
  };
}

/** Prometheus's permission to write to one Amazon Managed Service for Prometheus workspace, and nothing else. */
export function ampRemoteWritePolicy(remote: RemoteWritePlan & { kind: "amp" }) {
  return {
    Version: "2012-10-17" as const,
    Statement: [
      {
        Sid: "RemoteWrite",
        Effect: "Allow" as const,
        Action: "aps:RemoteWrite",
        Resource: `arn:aws:aps:${remote.region}:*:workspace/${remote.workspaceId}`,
      },
    ],
  };
}
