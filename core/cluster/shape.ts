/**
 * The RayJob cluster shape every workload shares: a head on the CPU pool that runs no work, and one worker pod
 * per GPU node that takes all of the node's GPUs, with integer CPU and memory requests equal to limits that fit
 * the node after the kubelet's reserve and the DaemonSets. Pure: returns a plan with a reason per value.
 */
import { ENVIRONMENT_PROFILES, type CleanupPolicy } from "../environments";
import type { Environment } from "../config/stack";
import { DecisionLog, type Decision } from "../decisions";
import { IssueCollector } from "../errors";
import { POOL_LABEL, type CpuPoolPlan, type GpuPoolPlan, type Taint } from "../pools";
import { planHead, type HeadPlan } from "./head";
import { workerEnv } from "./env";

/** Mount point of the memory-backed shared memory volume. */
export const SHM_PATH = "/dev/shm";
/** Mount point of the spill volume (an emptyDir on the node's instance-store NVMe). */
export const SPILL_PATH = "/mnt/ray-spill";
/** Share of the NVMe the spill volume may fill, leaving room for images and the kubelet. */
export const SPILL_NVME_FRACTION = 0.5;

/** What a workload kind needs from each worker pod, with the reason for each figure. */
export interface WorkerNeeds {
  /** Share of the worker's memory given to the Ray object store. */
  readonly objectStoreFraction: number;
  /** /dev/shm beyond the object store, per GPU (DataLoader workers and NCCL's SHM transport use it). */
  readonly shmExtraGiBPerGpu: number;
  /** Heap (memory outside /dev/shm) each GPU's process needs at least, e.g. to load a checkpoint. */
  readonly minHeapGiBPerGpu: number;
  readonly why: { readonly objectStore: string; readonly shmExtra: string; readonly minHeap: string };
}

/** Input of {@link planClusterShape}. */
export interface ClusterShapeInput {
  readonly environment: Environment;
  /** Total GPUs the job needs. */
  readonly gpus: number;
  readonly gpuPool: GpuPoolPlan;
  readonly headPool: CpuPoolPlan;
  readonly needs: WorkerNeeds;
  /** Limit on the whole run, in minutes; defaults to the environment's. */
  readonly maxRuntimeMinutes?: number | undefined;
  /**
   * Whether the job is submitted through a Kueue queue (cleanup must then be `shutdownAfterJobFinishes`).
   * @default false
   */
  readonly queued?: boolean;
  /** Config path of the workload, for error messages, e.g. `ray-gpu:workloads[0]`. */
  readonly path: string;
}

/** The worker group of the plan. */
export interface WorkerPlan {
  readonly groupName: string;
  readonly replicas: number;
  readonly gpusPerWorker: number;
  readonly cpus: number;
  readonly memoryGiB: number;
  readonly objectStoreGiB: number;
  readonly shmGiB: number;
  readonly heapGiB: number;
  readonly spillGiB: number;
  /**
   * The EFA each worker requests: a multi-node job on an EFA pool takes every interface of its node and the pool's
   * hugepages for libfabric; `false` otherwise (one node's collectives stay on its PCIe), as the plan digest has read
   * it since before EFA.
   */
  readonly efa: { readonly interfaces: number; readonly hugepagesMiB: number } | false;
  /**
   * Whether the pool's nodes may be spot (`capacityType` spot or spot-with-fallback): an interruption can take a node
   * mid-job.
   */
  readonly spot: boolean;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: readonly Taint[];
  readonly env: Readonly<Record<string, string>>;
}

/** Lifecycle fields of the RayJob. */
export interface LifecyclePlan {
  readonly cleanup: CleanupPolicy;
  readonly backoffLimit: number;
  readonly preRunningDeadlineSeconds: number;
  readonly activeDeadlineSeconds: number;
}

/** The whole shape. */
export interface ClusterShapePlan {
  readonly head: HeadPlan;
  readonly worker: WorkerPlan;
  readonly lifecycle: LifecyclePlan;
  readonly decisions: readonly Decision[];
}

/** How a worker pod's memory splits: object store, /dev/shm (store plus per-GPU extra) and the heap left. */
function memorySplit(pool: GpuPoolPlan, needs: WorkerNeeds, gpusPerNode: number) {
  const objectStoreGiB = Math.max(1, Math.floor(pool.podBudget.memoryGiB * needs.objectStoreFraction));
  const shmGiB = objectStoreGiB + needs.shmExtraGiBPerGpu * gpusPerNode;
  return { objectStoreGiB, shmGiB, heapGiB: pool.podBudget.memoryGiB - shmGiB };
}

/** Whole nodes of the pool, within its size, each leaving the worker enough CPU, memory and heap. */
function checkFit(input: ClusterShapeInput, gpusPerNode: number, issues: IssueCollector): void {
  const { gpuPool: pool, needs, path, gpus } = input;
  const { cpus, memoryGiB } = pool.podBudget;
  if (gpus % gpusPerNode !== 0) {
    const lower = Math.floor(gpus / gpusPerNode) * gpusPerNode;
    const options = [lower, lower + gpusPerNode].filter((n) => n > 0).join(" or ");
    issues.add(
      `${path}.gpus`,
      `must be a multiple of ${gpusPerNode} (GPUs per ${pool.instanceType} node of pool "${pool.name}"): ` +
        `use ${options}, or a pool of 1-GPU instances`,
      gpus,
    );
  }
  const replicas = Math.ceil(gpus / gpusPerNode);
  if (replicas > pool.maxNodes) {
    issues.add(
      `${path}.gpus`,
      `needs ${replicas} ${pool.instanceType} nodes but pool "${pool.name}" has maxNodes ${pool.maxNodes}; ` +
        `raise its maxNodes or ask for fewer GPUs`,
      gpus,
    );
  }
  if (cpus < gpusPerNode || memoryGiB < 2 * gpusPerNode) {
    const reserve = `${pool.daemonSetReserve.cpuMillis}m, ${pool.daemonSetReserve.memoryMiB} MiB`;
    const message =
      `a ${pool.instanceType} node of pool "${pool.name}" leaves ${cpus} CPUs and ${memoryGiB} GiB for ` +
      `the Ray worker after DaemonSets (${reserve}); it needs at least 1 CPU and 2 GiB per GPU: lower ` +
      `daemonSetReserve or use a larger size`;
    issues.add(`${path}.nodePool`, message, pool.name);
  }
  const { shmGiB, heapGiB } = memorySplit(pool, needs, gpusPerNode);
  if (heapGiB < needs.minHeapGiBPerGpu * gpusPerNode) {
    const message =
      `a ${pool.instanceType} worker has ${memoryGiB} GiB; after ${shmGiB} GiB of /dev/shm only ${heapGiB} ` +
      `GiB of heap remain, below the ${needs.minHeapGiBPerGpu * gpusPerNode} GiB this workload needs; ` +
      `use a larger size`;
    issues.add(`${path}.instanceType`, message, pool.instanceType);
  }
}

/** Why each worker value is what it is, one named function per value. */
const WHY_WORKER = {
  replicas: (gpus: number, perNode: number, pool: GpuPoolPlan, replicas: number) =>
    `${gpus} GPUs / ${perNode} per ${pool.instanceType} node = ${replicas} worker pod(s), one per node; ` +
    "min = max = replicas, so the job starts at full size",
  gpus: (perNode: number) =>
    `each worker takes all ${perNode} GPU(s) of its node: one large Ray pod per node shares one object store ` +
    "and keeps NCCL traffic inside the node",
  cpus: (pool: GpuPoolPlan) =>
    `${pool.allocatable.cpuMillis}m allocatable on ${pool.instanceType} minus ${pool.daemonSetReserve.cpuMillis}m ` +
    "for DaemonSets, rounded down to whole CPUs (KubeRay rounds CPU up, so a fractional limit would over-advertise)",
  memory: (pool: GpuPoolPlan) =>
    `${pool.allocatable.memoryMiB} MiB allocatable (AL2023 kube-reserved, eviction threshold, 7.5% VM overhead) ` +
    `minus ${pool.daemonSetReserve.memoryMiB} MiB for DaemonSets, rounded down; request = limit because KubeRay ` +
    "ignores memory requests",
  objectStore: (needs: WorkerNeeds, memoryGiB: number) =>
    `${Math.round(needs.objectStoreFraction * 100)}% of ${memoryGiB} GiB: ${needs.why.objectStore}`,
  shm: (needs: WorkerNeeds, objectStoreGiB: number) =>
    `memory-backed /dev/shm = object store ${objectStoreGiB} GiB + ${needs.shmExtraGiBPerGpu} GiB per GPU ` +
    `(${needs.why.shmExtra}); it counts against the pod's memory`,
  heap: (needs: WorkerNeeds) => `memory left outside /dev/shm for the training processes (${needs.why.minHeap})`,
  spill: (nvmeGB: number) =>
    `object spilling goes to ${SPILL_PATH}, an emptyDir on the node's instance-store NVMe (${nvmeGB} GB), ` +
    `capped at ${SPILL_NVME_FRACTION * 100}% of it`,
};

/** Replicas and each pod's GPUs, CPUs and memory. */
function decideWorkerSize(input: ClusterShapeInput, gpusPerNode: number, log: DecisionLog) {
  const pool = input.gpuPool;
  const replicas = Math.ceil(input.gpus / gpusPerNode);
  log.decide("worker.replicas", replicas, WHY_WORKER.replicas(input.gpus, gpusPerNode, pool, replicas));
  log.decide("worker.gpus", gpusPerNode, WHY_WORKER.gpus(gpusPerNode));
  const cpus = log.decide("worker.cpus", pool.podBudget.cpus, WHY_WORKER.cpus(pool));
  const memoryGiB = log.decide("worker.memoryGiB", pool.podBudget.memoryGiB, WHY_WORKER.memory(pool));
  return { replicas, gpusPerWorker: gpusPerNode, cpus, memoryGiB };
}

/** Object store, /dev/shm, heap and the spill volume on NVMe. */
function decideWorkerMemory(input: ClusterShapeInput, gpusPerNode: number, memoryGiB: number, log: DecisionLog) {
  const { gpuPool: pool, needs } = input;
  const { objectStoreGiB, shmGiB, heapGiB } = memorySplit(pool, needs, gpusPerNode);
  log.decide("worker.objectStoreGiB", objectStoreGiB, WHY_WORKER.objectStore(needs, memoryGiB));
  log.decide("worker.shmGiB", shmGiB, WHY_WORKER.shm(needs, objectStoreGiB));
  log.decide("worker.heapGiB", heapGiB, WHY_WORKER.heap(needs));
  const nvmeGB = pool.node.nvmeGB;
  const spillGiB = log.decide(
    "worker.spillGiB",
    Math.floor((nvmeGB * 1e9 * SPILL_NVME_FRACTION) / 2 ** 30),
    WHY_WORKER.spill(nvmeGB),
  );
  return { objectStoreGiB, shmGiB, heapGiB, spillGiB };
}

/** The EFA a worker requests: on an EFA pool, when the job spans nodes (NCCL then crosses the network). */
function workerEfa(pool: GpuPoolPlan, replicas: number, log: DecisionLog): WorkerPlan["efa"] {
  if (!pool.efa) return false;
  if (replicas === 1) {
    log.decide("worker.efa", "none", "one node: NCCL's collectives stay on the node's PCIe, the network is not used");
    return false;
  }
  const { interfaces, podHugepagesMiB } = pool.efa;
  log.decide(
    "worker.efa",
    `${interfaces} interface(s), ${podHugepagesMiB} MiB hugepages`,
    `the job spans ${replicas} nodes of EFA pool ${pool.name}: NCCL crosses them over libfabric's EFA provider, ` +
      `which needs the node's EFA interface(s) and hugepages for its buffers`,
  );
  return { interfaces, hugepagesMiB: podHugepagesMiB };
}

/** The worker group: one pod per node with all its GPUs, the memory split, spill on NVMe, and its environment. */
function planWorker(input: ClusterShapeInput, gpusPerNode: number, log: DecisionLog): WorkerPlan {
  const pool = input.gpuPool;
  const size = decideWorkerSize(input, gpusPerNode, log);
  const memory = decideWorkerMemory(input, gpusPerNode, size.memoryGiB, log);
  const gpu = { name: pool.node.gpu, usableGiB: pool.node.usableGpuMemoryGiB };
  const efa = workerEfa(pool, size.replicas, log);
  const env = workerEnv({ environment: input.environment, multiNode: size.replicas > 1, efa: !!efa, gpu, log });
  const placement = {
    nodeSelector: { [POOL_LABEL]: pool.name },
    tolerations: pool.taints,
    efa,
    spot: pool.capacityType !== "on-demand",
  };
  return { groupName: `gpu-${pool.name}`.slice(0, 63), ...size, ...memory, ...placement, env };
}

/** The environment's lifecycle: retries, deadlines and cleanup, with the workload's own run limit. */
function planLifecycle(input: ClusterShapeInput, log: DecisionLog): LifecyclePlan {
  const profile = ENVIRONMENT_PROFILES[input.environment];
  const minutes = input.maxRuntimeMinutes ?? profile.defaultMaxRuntimeMinutes;
  const runLimitReason =
    input.maxRuntimeMinutes === undefined
      ? profile.why.defaultMaxRuntimeMinutes
      : `the workload's maxRuntimeMinutes (${minutes})`;
  const queued = input.queued ?? false;
  const lifecycle: LifecyclePlan = {
    cleanup: queued ? profile.queuedCleanup : profile.cleanup,
    backoffLimit: log.decide("lifecycle.backoffLimit", profile.backoffLimit, profile.why.backoffLimit),
    preRunningDeadlineSeconds: log.decide(
      "lifecycle.preRunningDeadlineSeconds",
      profile.preRunningDeadlineSeconds,
      profile.why.preRunningDeadlineSeconds,
    ),
    activeDeadlineSeconds: log.decide("lifecycle.activeDeadlineSeconds", minutes * 60, runLimitReason),
  };
  const cleanup =
    lifecycle.cleanup.mode === "shutdown"
      ? `shutdownAfterJobFinishes, ttl ${lifecycle.cleanup.ttlSeconds}s`
      : "deletionRules";
  log.decide("lifecycle.cleanup", cleanup, queued ? profile.why.queuedCleanup : profile.why.cleanup);
  return lifecycle;
}

/**
 * Plans head, workers and lifecycle for `input.gpus` GPUs on `input.gpuPool`.
 * @throws ConfigError when the GPUs are not a whole number of nodes, exceed the pool, or the pods do not fit.
 */
export function planClusterShape(input: ClusterShapeInput): ClusterShapePlan {
  const log = new DecisionLog();
  const issues = new IssueCollector();
  const gpusPerNode = input.gpuPool.node.gpus;
  checkFit(input, gpusPerNode, issues);
  const head = planHead({
    workers: Math.ceil(input.gpus / gpusPerNode),
    pool: input.headPool,
    path: input.path,
    issues,
    log,
  });
  issues.throwIfAny();
  const worker = planWorker(input, gpusPerNode, log);
  const lifecycle = planLifecycle(input, log);
  return { head, worker, lifecycle, decisions: log.decisions };
}
