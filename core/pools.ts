/**
 * Node pool plans: what each pool's nodes offer a Ray pod, the labels and taints RayJobs select on, and the
 * hourly cost at full scale. Pure; the platform components and the RayJob shape both read these plans.
 */
import type { AcceleratorName } from "./catalog/accelerators";
import { nodeAllocatable, type NodeAllocatable } from "./catalog/eks-allocatable";
import { defaultDaemonSetReserve, type DaemonSetReserve } from "./catalog/daemonsets";
import { EFA_HUGEPAGES, efaNodeHugepagesMiB } from "./catalog/efa";
import {
  acceleratorOf,
  CPU_INSTANCES,
  GPU_INSTANCES,
  hostMemoryGiBPerGpu,
  usableGpuMemoryGiB,
  type CpuInstanceType,
  type GpuInstanceType,
} from "./catalog/instances";
import { SPOT_WAIT_MINUTES, type GpuCapacityType, type PlatformConfig } from "./config/platform";

/** Node label every pool sets to its name; RayJob pods select on it. */
export const POOL_LABEL = "ray-gpu.io/pool";
/** Node label with the pool's role. */
export const ROLE_LABEL = "ray-gpu.io/role";
/** Node label of an EFA pool's nodes (`"true"`): the EFA device plugin selects on it. */
export const EFA_LABEL = "ray-gpu.io/efa";
/** The kubelet's label of a node's EC2 instance type (a well-known Kubernetes label). */
export const INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type";

/** A Kubernetes taint. */
export interface Taint {
  readonly key: string;
  readonly value: string;
  readonly effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

/** Accelerator label the Cluster Autoscaler reads to know a node template has GPUs (its AWS README). */
export const ACCELERATOR_LABEL_KEY = "k8s.amazonaws.com/accelerator";

/** Taint on every GPU node: only pods that tolerate it (Ray GPU workers, the device plugin) land there. */
export const GPU_TAINT: Taint = { key: "nvidia.com/gpu", value: "true", effect: "NoSchedule" };

/** What one Ray pod that owns a whole node may request: whole CPUs and whole GiB (requests = limits). */
export interface PodBudget {
  readonly cpus: number;
  readonly memoryGiB: number;
  readonly gpus: number;
}

interface PoolPlanBase {
  readonly name: string;
  readonly minNodes: number;
  readonly maxNodes: number;
  readonly capacityType: GpuCapacityType;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly allocatable: NodeAllocatable;
  readonly daemonSetReserve: DaemonSetReserve;
  readonly podBudget: PodBudget;
  /**
   * Approximate on-demand price of `maxNodes` nodes in us-east-1, USD per hour: what the pool costs at most on any
   * capacity type (a spot node's price is capped at the on-demand price, EC2's default maximum), and on the dearest of
   * a GPU pool's instance types.
   */
  readonly usdPerHourAtMax: number;
}

/** The CPU pool (Ray heads, operator, system pods). */
export interface CpuPoolPlan extends PoolPlanBase {
  readonly role: "system";
  readonly instanceType: CpuInstanceType;
}

/** The figures of a GPU node a job is planned on. */
export const POOL_NODE_FIGURES = [
  "podBudget",
  "usableGpuMemoryGiB",
  "hostMemoryGiBPerGpu",
  "nvmeGB",
  "networkBaselineMbps",
  "denseBf16Tflops",
  "memoryBandwidthGBps",
] as const;
/** One of {@link POOL_NODE_FIGURES}. */
export type PoolNodeFigure = (typeof POOL_NODE_FIGURES)[number];

/**
 * What every node of a GPU pool offers at least, whichever of the pool's instance types it is: the figures a job on
 * the pool is planned and tuned with, and for each the type that binds it (the first in the pool's order among equals).
 */
export interface PoolNode {
  /** GPUs per node: the same on every type of a pool (a rule of the config). */
  readonly gpus: number;
  /** Memory CUDA hands out per GPU, GiB (the accelerator's `cudaTotalGiB`). */
  readonly usableGpuMemoryGiB: number;
  /** The GPU of that memory: the accelerator of the type that binds it. */
  readonly gpu: AcceleratorName;
  /** Host memory per GPU, GiB (nominal). */
  readonly hostMemoryGiBPerGpu: number;
  /** Local NVMe, decimal GB. */
  readonly nvmeGB: number;
  readonly networkBaselineMbps: number;
  /** Dense BF16 TFLOPS of one GPU. */
  readonly denseBf16Tflops: number;
  /** Memory bandwidth of one GPU, GB/s: what bounds decoding and other memory-bound kernels (../forecast/). */
  readonly memoryBandwidthGBps: number;
  readonly binding: { readonly [F in PoolNodeFigure]: GpuInstanceType };
}

/** What an EFA pool's nodes offer and reserve: interfaces for `vpc.amazonaws.com/efa`, hugepages for libfabric. */
export interface PoolEfa {
  /** EFA interfaces every node of the pool has (the least over its sizes). */
  readonly interfaces: number;
  /** MiB of 2 MiB hugepages each node reserves at boot, out of its allocatable memory. */
  readonly nodeHugepagesMiB: number;
  /** MiB of hugepages a worker pod requests. */
  readonly podHugepagesMiB: number;
}

/** The EFA of a pool of `types`, or undefined when the pool does not use it. */
export function poolEfa(types: readonly GpuInstanceType[], efa: boolean): PoolEfa | undefined {
  if (!efa) return undefined;
  return {
    interfaces: Math.min(...types.map((t) => GPU_INSTANCES[t].efaInterfaces)),
    nodeHugepagesMiB: efaNodeHugepagesMiB(),
    podHugepagesMiB: EFA_HUGEPAGES.podMiB,
  };
}

/** A GPU pool: g5 (A10G), g6 (L4) or g6e (L40S) nodes, of one instance type or several in fallback order. */
export interface GpuPoolPlan extends PoolPlanBase {
  readonly role: "gpu";
  /** The pool's own instance type, tried first. */
  readonly instanceType: GpuInstanceType;
  /** Every type the pool's nodes may be, in the order they are tried: `instanceType`, then the fallbacks. */
  readonly instanceTypes: readonly GpuInstanceType[];
  /**
   * What every node offers at least. `allocatable` and `podBudget` are floors too (per field, over every type), so a
   * Ray pod sized to them fits on any node of the pool.
   */
  readonly node: PoolNode;
  readonly availabilityZone: string | undefined;
  /** The nodes' EFA, when the pool uses it (`efa: true`); `allocatable` and `podBudget` are net of its hugepages. */
  readonly efa: PoolEfa | undefined;
  /** Launch the pool's nodes in a cluster placement group (needs `availabilityZone`; always with EFA). */
  readonly clusterPlacementGroup: boolean;
  /** Root EBS volume (gp3) in GiB. */
  readonly rootVolumeGiB: number;
  /**
   * Minutes the Cluster Autoscaler waits for a spot node before it starts an on-demand one: set for a
   * spot-with-fallback pool only.
   */
  readonly spotWaitMinutes: number | undefined;
}

export type PoolPlan = CpuPoolPlan | GpuPoolPlan;

/** All pools of a platform: the CPU pool first, then the GPU pools in config order. */
export interface PoolsPlan {
  readonly cpu: CpuPoolPlan;
  readonly gpu: readonly GpuPoolPlan[];
}

/** Whole CPUs and GiB left for one Ray pod after the kubelet's reserve and the DaemonSets. */
export function podBudget(allocatable: NodeAllocatable, reserve: DaemonSetReserve): PodBudget {
  return {
    cpus: Math.max(0, Math.floor((allocatable.cpuMillis - reserve.cpuMillis) / 1000)),
    memoryGiB: Math.max(0, Math.floor((allocatable.memoryMiB - reserve.memoryMiB) / 1024)),
    gpus: allocatable.gpus,
  };
}

const cost = (usdPerHour: number, nodes: number) => Math.round(usdPerHour * nodes * 1000) / 1000;

/** The allocatable of a node of any of `types`, per field the least (`instanceType`: the one with the least CPU). */
function floorAllocatable(types: readonly GpuInstanceType[]): NodeAllocatable {
  const all = types.map((t) => nodeAllocatable(t));
  const least = (f: (a: NodeAllocatable) => number) => Math.min(...all.map(f));
  const cpuLeast = all.find((a) => a.cpuMillis === least((x) => x.cpuMillis))!;
  return {
    ...cpuLeast,
    maxPods: least((a) => a.maxPods),
    capacityMemoryMiB: least((a) => a.capacityMemoryMiB),
    memoryMiB: least((a) => a.memoryMiB),
  };
}

/** Each figure of a node of `type` after `reserve`; a pod budget compares by CPUs, then memory. */
function nodeFigures(type: GpuInstanceType, reserve: DaemonSetReserve) {
  const spec = GPU_INSTANCES[type];
  const b = podBudget(nodeAllocatable(type), reserve);
  return {
    podBudget: b.cpus * 1e6 + b.memoryGiB,
    usableGpuMemoryGiB: usableGpuMemoryGiB(type),
    hostMemoryGiBPerGpu: hostMemoryGiBPerGpu(type),
    nvmeGB: spec.nvmeGB,
    networkBaselineMbps: spec.networkBaselineMbps,
    denseBf16Tflops: acceleratorOf(type).denseBf16Tflops,
    memoryBandwidthGBps: acceleratorOf(type).memoryBandwidthGBps,
  } satisfies Record<PoolNodeFigure, number>;
}

/** What every node of a pool of `types` offers at least after `reserve`, and the type that binds each figure. */
export function poolNode(types: readonly GpuInstanceType[], reserve: DaemonSetReserve): PoolNode {
  const figures = types.map((t) => ({ type: t, of: nodeFigures(t, reserve) }));
  const bind = (f: PoolNodeFigure) => figures.reduce((low, x) => (x.of[f] < low.of[f] ? x : low), figures[0]!);
  const binding = Object.fromEntries(POOL_NODE_FIGURES.map((f) => [f, bind(f).type])) as PoolNode["binding"];
  const least = (f: PoolNodeFigure) => bind(f).of[f];
  return {
    gpus: GPU_INSTANCES[types[0]!].gpus,
    usableGpuMemoryGiB: least("usableGpuMemoryGiB"),
    gpu: GPU_INSTANCES[binding.usableGpuMemoryGiB].accelerator,
    hostMemoryGiBPerGpu: least("hostMemoryGiBPerGpu"),
    nvmeGB: least("nvmeGB"),
    networkBaselineMbps: least("networkBaselineMbps"),
    denseBf16Tflops: least("denseBf16Tflops"),
    memoryBandwidthGBps: least("memoryBandwidthGBps"),
    binding,
  };
}

/** On-demand USD per hour of one node of a pool of `types`: its dearest size's (us-east-1). */
export const usdPerNodeHour = (types: readonly GpuInstanceType[]) =>
  Math.max(...types.map((t) => GPU_INSTANCES[t].usdPerHourUsEast1));

/** Plans every pool of `platform`. */
export function planPools(platform: PlatformConfig): PoolsPlan {
  const c = platform.cpuNodeGroup;
  const cpuAlloc = nodeAllocatable(c.instanceType);
  const cpuReserve = c.daemonSetReserve ?? defaultDaemonSetReserve("cpu");
  const cpu: CpuPoolPlan = {
    role: "system",
    name: c.name,
    instanceType: c.instanceType,
    minNodes: c.minNodes,
    maxNodes: c.maxNodes,
    capacityType: "on-demand",
    labels: { [POOL_LABEL]: c.name, [ROLE_LABEL]: "system" },
    taints: [],
    allocatable: cpuAlloc,
    daemonSetReserve: cpuReserve,
    podBudget: podBudget(cpuAlloc, cpuReserve),
    usdPerHourAtMax: cost(CPU_INSTANCES[c.instanceType].usdPerHourUsEast1, c.maxNodes),
  };
  const gpu = platform.gpuNodeGroups.map((g): GpuPoolPlan => {
    const types = [g.instanceType, ...(g.fallbackInstanceTypes ?? [])];
    const efa = poolEfa(types, g.efa);
    const floor = floorAllocatable(types);
    const alloc = efa ? { ...floor, memoryMiB: floor.memoryMiB - efa.nodeHugepagesMiB } : floor;
    const reserve = g.daemonSetReserve ?? defaultDaemonSetReserve("gpu");
    const budget = podBudget(alloc, reserve);
    return {
      role: "gpu",
      name: g.name,
      instanceType: g.instanceType,
      instanceTypes: types,
      node: poolNode(types, reserve),
      minNodes: g.minNodes,
      maxNodes: g.maxNodes,
      capacityType: g.capacityType,
      labels: {
        [POOL_LABEL]: g.name,
        [ROLE_LABEL]: "gpu",
        [ACCELERATOR_LABEL_KEY]: acceleratorOf(g.instanceType).nodeLabel,
        ...(efa ? { [EFA_LABEL]: "true" } : {}),
      },
      taints: [GPU_TAINT],
      allocatable: alloc,
      daemonSetReserve: reserve,
      podBudget: budget,
      usdPerHourAtMax: cost(usdPerNodeHour(types), g.maxNodes),
      availabilityZone: g.availabilityZone,
      efa,
      clusterPlacementGroup: g.clusterPlacementGroup ?? g.efa,
      rootVolumeGiB: g.rootVolumeGiB,
      spotWaitMinutes:
        g.capacityType === "spot-with-fallback" ? (g.spotWaitMinutes ?? SPOT_WAIT_MINUTES.default) : undefined,
    };
  });
  return { cpu, gpu };
}

/**
 * `pool` as if its nodes were all of `type` (one of its instance types): the node figures of that type alone, the
 * pool's floors otherwise. What a job is planned on to learn whether it fits that type.
 */
export function poolOn(pool: GpuPoolPlan, type: GpuInstanceType): GpuPoolPlan {
  return {
    ...pool,
    instanceTypes: [type],
    node: poolNode([type], pool.daemonSetReserve),
  };
}

/** What the cost of a pool at max size means for its capacity type, in words (empty for on-demand). */
export function capacityCostNote(pool: {
  readonly capacityType: GpuCapacityType;
  readonly maxNodes: number;
  readonly usdPerHourAtMax: number;
  readonly spotWaitMinutes?: number | undefined;
}): string {
  const cap = `$${pool.usdPerHourAtMax.toFixed(2)}/h`;
  const notes: Readonly<Record<GpuCapacityType, string>> = {
    "on-demand": "",
    spot: `spot: the price varies, at most ${cap} (the on-demand price caps it)`,
    "spot-with-fallback":
      `spot first (the price varies), on demand when spot has no node within ` +
      `${pool.spotWaitMinutes ?? SPOT_WAIT_MINUTES.default} min: at most ${cap} with all ${pool.maxNodes} nodes on demand`,
  };
  return notes[pool.capacityType];
}
