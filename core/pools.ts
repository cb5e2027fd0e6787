/**
 * Node pool plans: what each pool's nodes offer a Ray pod, the labels and taints RayJobs select on, and the
 * hourly cost at full scale. Pure; the platform components and the RayJob shape both read these plans.
 */
import { nodeAllocatable, type NodeAllocatable } from "./catalog/eks-allocatable";
import { defaultDaemonSetReserve, type DaemonSetReserve } from "./catalog/daemonsets";
import { CPU_INSTANCES, GPU_INSTANCES, type CpuInstanceType, type GpuInstanceType } from "./catalog/instances";
import type { PlatformConfig } from "./config/platform";

/** Node label every pool sets to its name; RayJob pods select on it. */
export const POOL_LABEL = "ray-gpu.io/pool";
/** Node label with the pool's role. */
export const ROLE_LABEL = "ray-gpu.io/role";

/** A Kubernetes taint. */
export interface Taint {
  readonly key: string;
  readonly value: string;
  readonly effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

/** Accelerator label the Cluster Autoscaler reads to know a node template has GPUs (its AWS README). */
export const ACCELERATOR_LABEL = { "k8s.amazonaws.com/accelerator": "nvidia-a10g" } as const;

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
  readonly capacityType: "on-demand" | "spot";
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly allocatable: NodeAllocatable;
  readonly daemonSetReserve: DaemonSetReserve;
  readonly podBudget: PodBudget;
  /** Approximate on-demand price of `maxNodes` nodes in us-east-1, USD per hour. */
  readonly usdPerHourAtMax: number;
}

/** The CPU pool (Ray heads, operator, system pods). */
export interface CpuPoolPlan extends PoolPlanBase {
  readonly role: "system";
  readonly instanceType: CpuInstanceType;
}

/** An A10G pool. */
export interface GpuPoolPlan extends PoolPlanBase {
  readonly role: "gpu";
  readonly instanceType: GpuInstanceType;
  readonly availabilityZone: string | undefined;
  readonly efa: boolean;
  /** Launch the pool's nodes in a cluster placement group (needs `availabilityZone`). */
  readonly clusterPlacementGroup: boolean;
  /** Root EBS volume (gp3) in GiB. */
  readonly rootVolumeGiB: number;
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
    const alloc = nodeAllocatable(g.instanceType);
    const reserve = g.daemonSetReserve ?? defaultDaemonSetReserve("gpu");
    return {
      role: "gpu",
      name: g.name,
      instanceType: g.instanceType,
      minNodes: g.minNodes,
      maxNodes: g.maxNodes,
      capacityType: g.capacityType,
      labels: { [POOL_LABEL]: g.name, [ROLE_LABEL]: "gpu", ...ACCELERATOR_LABEL },
      taints: [GPU_TAINT],
      allocatable: alloc,
      daemonSetReserve: reserve,
      podBudget: podBudget(alloc, reserve),
      usdPerHourAtMax: cost(GPU_INSTANCES[g.instanceType].usdPerHourUsEast1, g.maxNodes),
      availabilityZone: g.availabilityZone,
      efa: g.efa,
      clusterPlacementGroup: g.clusterPlacementGroup,
      rootVolumeGiB: g.rootVolumeGiB,
    };
  });
  return { cpu, gpu };
}
