/**
 * Job queueing with Kueue: the pinned chart and its values, one ResourceFlavor per pool, the ClusterQueue's quota per
 * pool (GPU pools: `maxNodes` × what one Ray pod of the pool may request; the CPU pool: what its nodes have left after
 * the platform's own pods), and what happens when the stack's
 * jobs are submitted together (which are admitted, which wait in the queue). Pure.
 *
 * Sources (kubernetes-sigs/kueue v0.19.2, commit 8eab6877; ray-project/kuberay v1.7.0):
 * - chart `oci://registry.k8s.io/kueue/charts/kueue` 0.19.2 (promoted in kubernetes/k8s.io PR #9856); its values file
 *   is `test/fixtures/charts/kueue-0.19.2-values.yaml`, which the tests check our keys against;
 * - RayJobs are managed when labelled `kueue.x-k8s.io/queue-name`; Kueue's webhook refuses one without
 *   `shutdownAfterJobFinishes: true` (pkg/controller/jobs/rayjob/rayjob_webhook.go);
 * - a flavor is chosen in list order, and only one whose `nodeLabels` agree with the pod set's node selector
 *   (site/content/en/docs/concepts/cluster_queue.md, resource_flavor.md);
 * - KubeRay resets a RayJob's `status.startTime` when Kueue unsuspends it, so activeDeadlineSeconds and
 *   preRunningDeadlineSeconds count from admission (ray-operator/controllers/ray/rayjob_controller.go);
 * - `waitForPodsReady` requeues an admitted job whose pods are not ready in time, releasing its quota
 *   (apis/config/v1beta2/configuration_types.go);
 * - a RayJob's pod sets are its head (one pod), each worker group, and with `submissionMode: K8sJobMode` the submitter
 *   pod (pkg/controller/jobs/rayjob/rayjob_controller.go `PodSets` and `addSubmitterPodSet`;
 *   pkg/controller/jobs/raycluster/common.go `BuildPodSets`): the head and submitter both count against the CPU pool's
 *   flavor, so its quota is kept to the millicore (a quota floored to whole CPUs would refuse a 6.5-CPU head and
 *   submitter on 6.83 CPUs of room forever);
 * - the chart's job webhooks (failurePolicy Fail) select namespaces by `managedJobsNamespaceSelector` when the
 *   Configuration has one, and otherwise every namespace but kube-system and the release's own
 *   (charts/kueue/templates/webhook/manifests.yaml). While Kueue's controller is not ready they refuse every new
 *   Job there, such as kube-prometheus-stack's pre-install hook Job, and nothing orders the two releases. Kueue's
 *   "Opt-in Namespace Management" page (site/content/en/docs/tasks/manage/enforce_job_management/) recommends
 *   selecting the namespaces Kueue manages explicitly in production: the selector names the workload namespace only.
 *
 * A spot-with-fallback pool keeps one flavor, selected by the pool label alone, over its spot and on-demand node
 * groups, with the pool's quota once: Kueue never moves a job to another flavor for want of nodes, so a flavor per
 * capacity type would pin a job to spot; the Cluster Autoscaler does the fallback (`./spot-fallback.ts`), and this
 * quota keeps the two groups to `maxNodes` busy nodes together.
 */
import { EFA_RESOURCE, HUGEPAGES_2MI_RESOURCE } from "../catalog/efa";
import { stableYaml } from "../serialize";
import type { GpuPoolPlan, PoolsPlan } from "../pools";
import { POOL_LABEL } from "../pools";
import type { HelmReleasePlan } from "./addons";
import { ADDON_NAMESPACES } from "./namespaces";

/** The Kueue chart, pinned. */
export const KUEUE_CHART = { chart: "kueue", version: "0.19.2", repo: "oci://registry.k8s.io/kueue/charts" } as const;
/** Kueue's API version for queues and flavors (v1beta2 is the storage version since 0.16). */
export const KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2";
/** The label that puts a job in a LocalQueue. */
export const QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name";
/** Name of the LocalQueue (in the workload namespace) and of the stack's ClusterQueue. */
export const QUEUE_NAME = "ray-gpu";
/** Resources the quota covers. */
export const COVERED_RESOURCES = ["cpu", "memory", "nvidia.com/gpu"] as const;
/**
 * Resources our pods request that the quota leaves out (`excludeResourcePrefixes`, each name its own prefix): an EFA
 * worker's interfaces and hugepages come with the whole node it holds, which its GPUs' quota already bounds. Kueue
 * refuses a job that requests a resource its ClusterQueue neither covers nor excludes: "resource <name> unavailable in
 * ClusterQueue" (pkg/scheduler/flavorassigner/flavorassigner.go `findFlavorForPodSetResource`), and it never runs.
 */
export const UNCOVERED_RESOURCES = [EFA_RESOURCE, HUGEPAGES_2MI_RESOURCE] as const;
/**
 * How long an admitted job's pods may take to become ready before Kueue requeues it (releasing its quota): a GPU
 * node from zero (about 5 min) plus a multi-GB image pull. Below every environment's preRunningDeadlineSeconds, so a
 * job that cannot start goes back to the queue instead of failing its deadline.
 */
export const WAIT_FOR_PODS_READY_MINUTES = 15;

/** The quota of one pool: what the ClusterQueue may admit on it. */
export interface PoolQuota {
  readonly pool: string;
  readonly role: "system" | "gpu";
  readonly gpus: number;
  /** CPUs, to the millicore (the CPU pool's room left is rarely whole CPUs). */
  readonly cpus: number;
  /** GiB, to the MiB. */
  readonly memoryGiB: number;
}

/** The stack's queue: quotas per pool, in flavor order (the CPU pool first). */
export interface QueuePlan {
  readonly name: string;
  readonly namespace: string;
  readonly quotas: readonly PoolQuota[];
  readonly waitForPodsReadyMinutes: number;
}

/** `maxNodes` Ray pods' worth of a GPU pool (no platform pod runs there: they do not tolerate the GPU taint). */
function quotaOf(pool: GpuPoolPlan): PoolQuota {
  const n = pool.maxNodes;
  return {
    pool: pool.name,
    role: pool.role,
    gpus: n * pool.podBudget.gpus,
    cpus: n * pool.podBudget.cpus,
    memoryGiB: n * pool.podBudget.memoryGiB,
  };
}

/**
 * Plans the queue of a stack's pools. The CPU pool's quota is `cpuRoomLeft`: what its nodes at max size have left
 * once the platform's own pods (CoreDNS, the operators, Prometheus) are placed (`poolRoomLeft` of
 * `core/deploy/layout.ts`), not `maxNodes` whole Ray pods.
 */
export function planQueue(
  pools: PoolsPlan,
  namespace: string,
  cpuRoomLeft: { readonly cpus: number; readonly memoryGiB: number },
): QueuePlan {
  const cpu: PoolQuota = { pool: pools.cpu.name, role: "system", gpus: 0, ...cpuRoomLeft };
  return {
    name: QUEUE_NAME,
    namespace,
    quotas: [cpu, ...pools.gpu.map(quotaOf)],
    waitForPodsReadyMinutes: WAIT_FOR_PODS_READY_MINUTES,
  };
}

/**
 * The namespaces Kueue's job webhooks and reconcilers see: the workload namespace alone, by the label Kubernetes sets
 * on every namespace (`kubernetes.io/metadata.name`), so no other release's Job (a chart's hook) waits on Kueue.
 */
export function managedJobsNamespaceSelector(workloadNamespace: string) {
  return {
    matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [workloadNamespace] }],
  };
}

/** Kueue's controller configuration (the chart takes it as one YAML string, replaced whole). */
function managerConfig(workloadNamespace: string | undefined): string {
  return stableYaml({
    apiVersion: "config.kueue.x-k8s.io/v1beta2",
    kind: "Configuration",
    health: { healthProbeBindAddress: ":8081" },
    metrics: { bindAddress: ":8443" },
    webhook: { port: 9443 },
    leaderElection: { leaderElect: true, resourceName: "c1f6bfd2.kueue.x-k8s.io" },
    manageJobsWithoutQueueName: false,
    ...(workloadNamespace ? { managedJobsNamespaceSelector: managedJobsNamespaceSelector(workloadNamespace) } : {}),
    waitForPodsReady: {
      timeout: `${WAIT_FOR_PODS_READY_MINUTES}m`,
      recoveryTimeout: `${WAIT_FOR_PODS_READY_MINUTES}m`,
      blockAdmission: false,
      requeuingStrategy: { timestamp: "Eviction", backoffBaseSeconds: 60, backoffMaxSeconds: 3600 },
    },
    integrations: { frameworks: ["batch/job", "ray.io/rayjob", "ray.io/raycluster"] },
    resources: { excludeResourcePrefixes: [...UNCOVERED_RESOURCES] },
  });
}

/**
 * The Kueue release: on the CPU pool (never on GPU nodes), managing only labelled jobs of the workload namespace.
 * @param cpuPool - pool of Kueue's controller. @default - any node
 * @param workloadNamespace - the one namespace Kueue's webhooks and controller see.
 *   @default - the chart's: every namespace but kube-system and Kueue's own (other charts' hook Jobs then wait on Kueue)
 */
export function kueueRelease(cpuPool?: string, workloadNamespace?: string): HelmReleasePlan {
  return {
    ...KUEUE_CHART,
    namespace: ADDON_NAMESPACES.kueue,
    values: {
      controllerManager: {
        ...(cpuPool ? { nodeSelector: { [POOL_LABEL]: cpuPool } } : {}),
        manager: {
          image: {
            repository: "registry.k8s.io/kueue/kueue",
            tag: `v${KUEUE_CHART.version}`,
            pullPolicy: "IfNotPresent",
          },
          resources: { requests: { cpu: "500m", memory: "512Mi" }, limits: { memory: "1Gi" } },
        },
      },
      managerConfig: { controllerManagerConfigYaml: managerConfig(workloadNamespace) },
    },
  };
}

/** What the job submitter pod requests (the rendered `submitterPodTemplate`), on the CPU pool beside the head. */
export const SUBMITTER_REQUEST = { cpuMillis: 500, memoryMiB: 512 } as const;

/** What one job asks of the queue: its workers' pool and GPUs, and the head's (and submitter's) CPU pool share. */
export interface QueueDemand {
  readonly workload: string;
  /** An example workload: planned and rendered, but not submitted by `pulumi up`. */
  readonly example: boolean;
  readonly gpuPool: string;
  readonly gpus: number;
  readonly workerCpus: number;
  readonly workerMemoryGiB: number;
  readonly headCpus: number;
  readonly headMemoryGiB: number;
}

/** One pool: what the jobs ask for together against its quota. */
export interface PoolAdmission {
  readonly pool: string;
  readonly quotaGpus: number;
  readonly askedGpus: number;
  readonly quotaCpus: number;
  readonly askedCpus: number;
}

/** Who runs at once and who waits when every job is submitted together, in config order (Kueue's FIFO). */
export interface AdmissionPlan {
  readonly pools: readonly PoolAdmission[];
  readonly admitted: readonly string[];
  /** Jobs that wait, with the pool whose quota they wait for. */
  readonly queued: readonly { readonly workload: string; readonly waitsFor: string }[];
}

/** Millicores and MiB: the admission arithmetic is done in whole units, as Kueue does with quantities. */
const milli = (cpus: number) => Math.round(cpus * 1000);
const mebi = (gib: number) => Math.round(gib * 1024);

/** Plays the queue once: each job in order is admitted if its pool and the CPU pool still have room. */
export function planAdmission(queue: QueuePlan, demands: readonly QueueDemand[]): AdmissionPlan {
  const left = new Map(
    queue.quotas.map((q) => [q.pool, { gpus: q.gpus, cpuMillis: milli(q.cpus), memoryMiB: mebi(q.memoryGiB) }]),
  );
  const system = queue.quotas.find((q) => q.role === "system")!;
  const admitted: string[] = [];
  const queued: { workload: string; waitsFor: string }[] = [];
  for (const d of demands) {
    const gpu = left.get(d.gpuPool);
    const cpu = left.get(system.pool)!;
    const worker = { gpus: d.gpus, cpuMillis: milli(d.workerCpus), memoryMiB: mebi(d.workerMemoryGiB) };
    const head = { cpuMillis: milli(d.headCpus), memoryMiB: mebi(d.headMemoryGiB) };
    const gpuFits =
      gpu && gpu.gpus >= worker.gpus && gpu.cpuMillis >= worker.cpuMillis && gpu.memoryMiB >= worker.memoryMiB;
    const headFits = cpu.cpuMillis >= head.cpuMillis && cpu.memoryMiB >= head.memoryMiB;
    if (!gpu || !gpuFits || !headFits) {
      queued.push({ workload: d.workload, waitsFor: !gpuFits ? d.gpuPool : system.pool });
      continue;
    }
    Object.assign(gpu, {
      gpus: gpu.gpus - worker.gpus,
      cpuMillis: gpu.cpuMillis - worker.cpuMillis,
      memoryMiB: gpu.memoryMiB - worker.memoryMiB,
    });
    Object.assign(cpu, { cpuMillis: cpu.cpuMillis - head.cpuMillis, memoryMiB: cpu.memoryMiB - head.memoryMiB });
    admitted.push(d.workload);
  }
  const pools = queue.quotas.map((q) => ({
    pool: q.pool,
    quotaGpus: q.gpus,
    askedGpus: demands.filter((d) => d.gpuPool === q.pool).reduce((n, d) => n + d.gpus, 0),
    quotaCpus: q.cpus,
    askedCpus:
      demands.reduce(
        (n, d) => n + milli(q.role === "system" ? d.headCpus : d.gpuPool === q.pool ? d.workerCpus : 0),
        0,
      ) / 1000,
  }));
  return { pools, admitted, queued };
}

/** A job Kueue can never admit: on one flavor it asks more than the flavor's whole quota. */
export interface NeverAdmitted {
  readonly workload: string;
  readonly pool: string;
  readonly role: PoolQuota["role"];
  readonly resource: "nvidia.com/gpu" | "cpu" | "memory";
  /** What the job asks of the flavor, in the resource's unit (GPUs, CPUs, GiB). */
  readonly asked: number;
  /** The flavor's whole nominal quota, in the same unit. */
  readonly quota: number;
}

/**
 * Jobs whose demand on some flavor exceeds that flavor's whole nominal quota: Kueue keeps them pending forever, however
 * long the queue drains (a queue waits only for quota other jobs hold). Their head and submitter on the CPU pool's
 * flavor, their workers on their GPU pool's.
 */
export function neverAdmitted(queue: QueuePlan, demands: readonly QueueDemand[]): NeverAdmitted[] {
  const system = queue.quotas.find((q) => q.role === "system")!;
  return demands.flatMap((d) => {
    const gpu = queue.quotas.find((q) => q.pool === d.gpuPool);
    const asks = [
      ...(gpu
        ? [
            { q: gpu, resource: "nvidia.com/gpu" as const, asked: d.gpus, quota: gpu.gpus },
            { q: gpu, resource: "cpu" as const, asked: d.workerCpus, quota: gpu.cpus },
            { q: gpu, resource: "memory" as const, asked: d.workerMemoryGiB, quota: gpu.memoryGiB },
          ]
        : []),
      { q: system, resource: "cpu" as const, asked: d.headCpus, quota: system.cpus },
      { q: system, resource: "memory" as const, asked: d.headMemoryGiB, quota: system.memoryGiB },
    ];
    const scale = (r: NeverAdmitted["resource"], n: number) => (r === "cpu" ? milli(n) : r === "memory" ? mebi(n) : n);
    return asks
      .filter((a) => scale(a.resource, a.asked) > scale(a.resource, a.quota))
      .map((a) => ({
        workload: d.workload,
        pool: a.q.pool,
        role: a.q.role,
        resource: a.resource,
        asked: a.asked,
        quota: a.quota,
      }));
  });
}
