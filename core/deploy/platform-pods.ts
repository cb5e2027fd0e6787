/**
 * The pods the platform itself runs outside DaemonSets (which `daemonSetReserve` covers), with what they request of
 * the scheduler. Requests are what the kube-scheduler counts: where our chart values set them they are read from the
 * planned values (one definition); a chart default of `resources: {}` requests nothing and takes no room. Pure.
 */
import { parseQuantity, MIB } from "../quantity";
import type { HelmReleasePlan } from "../platform/addons";

/** A pod to place: what it requests and where it may go. */
export interface PodRequest {
  /** `<owner>/<pod>`, e.g. `kube-prometheus-stack/prometheus`, `llm-pretrain/head`. */
  readonly name: string;
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  readonly gpus: number;
  /** Labels a node must carry. */
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** Taint keys it tolerates (NoSchedule). */
  readonly tolerates: readonly string[];
  /** Required node affinity: for each key, the values a node's label may have (`In`). */
  readonly affinityIn?: readonly { readonly key: string; readonly values: readonly string[] }[];
  /**
   * Why `pulumi up` does not wait for this pod, when it does not: unscheduled, it stays Pending after a deploy that
   * succeeds. @default - `pulumi up` waits for it, and fails when it cannot be scheduled
   */
  readonly notAwaited?: string;
}

/** One platform workload: its replicas and where its figures come from. */
interface PlatformWorkload {
  readonly name: string;
  readonly replicas: number;
  /** Where the pod's requests and placement are read: a release's values at a path, or fixed figures. */
  readonly from:
    | {
        readonly release: HelmReleasePlan;
        /** Where the container's `resources` are in the values. */
        readonly path: readonly string[];
        /** Where the pod's `nodeSelector` is, when not beside them. @default - `path` */
        readonly selectorPath?: readonly string[];
      }
    | { readonly cpuMillis: number; readonly memoryMiB: number };
  readonly source: string;
  /** Why `pulumi up` does not wait for its pods. @default - it waits for them */
  readonly notAwaited?: string;
}

/** The value at `path` of a Helm values tree, or undefined. */
function at(values: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>(
    (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
    values,
  );
}

/** A pod's requests and node selector from the values block of its container (`resources`, `nodeSelector`). */
function fromValues(release: HelmReleasePlan, path: readonly string[], selectorPath: readonly string[]) {
  const requests = (at(release.values, [...path, "resources", "requests"]) ?? {}) as { cpu?: string; memory?: string };
  return {
    cpuMillis: requests.cpu ? Math.round(parseQuantity(requests.cpu) * 1000) : 0,
    memoryMiB: requests.memory ? Math.round(parseQuantity(requests.memory) / MIB) : 0,
    nodeSelector: (at(release.values, [...selectorPath, "nodeSelector"]) ?? {}) as Record<string, string>,
  };
}

/** What the platform's pods follow from: the cluster's mode, the add-on releases, observability. */
export interface PlatformPodsInput {
  readonly cluster: { readonly mode: "create" | "existing" };
  readonly helm: { readonly kuberayOperator: HelmReleasePlan; readonly clusterAutoscaler: HelmReleasePlan };
  readonly observability:
    | { readonly helm: { readonly kubePrometheusStack: HelmReleasePlan; readonly dcgmExporter: HelmReleasePlan } }
    | undefined;
}

/** What decides which platform workloads run: the plan, and the queue's release when queueing is on. */
interface PlatformContext {
  readonly plan: PlatformPodsInput;
  readonly queueRelease: HelmReleasePlan | undefined;
}

/**
 * Why `pulumi up` does not wait for Prometheus: the Helm release waits for what the chart renders (pulumi-kubernetes
 * provider/pkg/provider/helm_release.go: `client.Wait = !SkipAwait`; Helm waits on the resources of the release's
 * manifest), that is the operator's Deployment, not the StatefulSet the Prometheus Operator makes from the Prometheus
 * resource afterwards.
 */
export const PROMETHEUS_NOT_AWAITED =
  "pulumi up does not wait for it (Helm waits for what the chart renders, the Prometheus Operator's Deployment, not " +
  "the StatefulSet the operator then makes), so the deploy succeeds and Prometheus stays Pending: no metrics are " +
  "scraped and no alert fires";

/** Each platform workload that requests room, or undefined where the plan does not run it; one entry per workload. */
const PLATFORM_WORKLOADS: readonly ((c: PlatformContext) => PlatformWorkload | undefined)[] = [
  ({ plan }) =>
    plan.cluster.mode !== "create"
      ? undefined
      : {
          name: "coredns/coredns",
          replicas: 2,
          from: { cpuMillis: 100, memoryMiB: 70 },
          source: "EKS coredns add-on Deployment: 2 replicas, requests cpu 100m, memory 70Mi",
        },
  ({ plan }) =>
    plan.cluster.mode !== "create" || !plan.observability
      ? undefined
      : {
          name: "aws-ebs-csi-driver/ebs-csi-controller",
          replicas: 2,
          from: { cpuMillis: 60, memoryMiB: 240 },
          source: "aws-ebs-csi-driver deploy/kubernetes/base/controller.yaml: 2 replicas, 6 containers x (10m, 40Mi)",
        },
  ({ plan }) => ({
    name: "kuberay-operator/kuberay-operator",
    replicas: 1,
    from: { release: plan.helm.kuberayOperator, path: [] },
    source: "our kuberay-operator values",
  }),
  ({ plan }) => ({
    name: "cluster-autoscaler/cluster-autoscaler",
    replicas: 1,
    from: { release: plan.helm.clusterAutoscaler, path: [] },
    source: "cluster-autoscaler chart values: replicaCount 1, resources {}",
  }),
  ({ queueRelease }) =>
    queueRelease && {
      name: "kueue/kueue-controller-manager",
      replicas: 1,
      from: { release: queueRelease, path: ["controllerManager", "manager"], selectorPath: ["controllerManager"] },
      source: "our kueue values; chart controllerManager.replicas 1",
    },
  ({ plan }) =>
    plan.observability && {
      name: "kube-prometheus-stack/prometheus",
      replicas: 1,
      from: { release: plan.observability.helm.kubePrometheusStack, path: ["prometheus", "prometheusSpec"] },
      source: "our kube-prometheus-stack values (prometheusSpec.resources)",
      notAwaited: PROMETHEUS_NOT_AWAITED,
    },
];

/** The platform's workloads of a plan, with the release values their requests are read from. */
function platformWorkloads(plan: PlatformPodsInput, queueRelease: HelmReleasePlan | undefined): PlatformWorkload[] {
  return PLATFORM_WORKLOADS.map((w) => w({ plan, queueRelease })).filter((w) => w !== undefined);
}

/**
 * The platform's pods with requests, to place before any job. Pods of the charts that request nothing (the Prometheus
 * Operator, Alertmanager, kube-state-metrics, Grafana: `resources: {}` in kube-prometheus-stack 88.5.3) take no room
 * the scheduler counts, and are left out.
 */
export function platformPods(plan: PlatformPodsInput, queueRelease: HelmReleasePlan | undefined): PodRequest[] {
  return platformWorkloads(plan, queueRelease).flatMap((w) => {
    const pod =
      "release" in w.from
        ? fromValues(w.from.release, w.from.path, w.from.selectorPath ?? w.from.path)
        : { cpuMillis: w.from.cpuMillis, memoryMiB: w.from.memoryMiB, nodeSelector: {} };
    return Array.from({ length: w.replicas }, (_, i) => ({
      name: w.replicas > 1 ? `${w.name}-${i + 1}` : w.name,
      ...pod,
      gpus: 0,
      tolerates: [],
      ...(w.notAwaited ? { notAwaited: w.notAwaited } : {}),
    }));
  });
}

/** A DaemonSet that must run on every GPU node, read from its release's values. */
interface GpuDaemonSet {
  readonly name: string;
  readonly release: HelmReleasePlan;
}

/** The tolerations, node selector and required node affinity of a values block, as a pod to match against nodes. */
function placementOf(name: string, values: Readonly<Record<string, unknown>>): PodRequest {
  const tolerations = (values["tolerations"] ?? []) as { key?: string }[];
  type Term = { matchExpressions?: { key: string; operator: string; values?: string[] }[] };
  const terms = (at(values, [
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
    "nodeSelectorTerms",
  ]) ?? []) as Term[];
  const affinityIn = terms
    .flatMap((t) => t.matchExpressions ?? [])
    .filter((e) => e.operator === "In")
    .map((e) => ({ key: e.key, values: e.values ?? [] }));
  return {
    name,
    cpuMillis: 0,
    memoryMiB: 0,
    gpus: 0,
    nodeSelector: (values["nodeSelector"] ?? {}) as Record<string, string>,
    tolerates: tolerations.flatMap((t) => (t.key ? [t.key] : [])),
    ...(affinityIn.length ? { affinityIn } : {}),
  };
}

/**
 * The DaemonSets that must run on every GPU node (the device plugin, which makes the node's GPUs schedulable, and the
 * DCGM exporter with observability), as pods whose placement the scheduler checks against each GPU node.
 */
export function gpuDaemonSets(
  plan: { readonly helm: { readonly nvidiaDevicePlugin: HelmReleasePlan } } & Pick<PlatformPodsInput, "observability">,
): PodRequest[] {
  const dcgm = plan.observability?.helm.dcgmExporter;
  const sets: GpuDaemonSet[] = [
    { name: "nvidia-device-plugin", release: plan.helm.nvidiaDevicePlugin },
    ...(dcgm ? [{ name: "dcgm-exporter", release: dcgm }] : []),
  ];
  return sets.map((d) => placementOf(d.name, d.release.values));
}

/**
 * The DaemonSets that must run on every EFA node: the EFA device plugin, without which the node offers no
 * `vpc.amazonaws.com/efa` and an EFA job's workers stay Pending.
 */
export function efaDaemonSets(plan: {
  readonly helm: { readonly efaDevicePlugin?: HelmReleasePlan | undefined };
}): PodRequest[] {
  const release = plan.helm.efaDevicePlugin;
  return release ? [placementOf("aws-efa-k8s-device-plugin", release.values)] : [];
}
