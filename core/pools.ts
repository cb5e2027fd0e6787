/**
 * Node pool plans: what each pool's nodes offer a Ray pod, the labels and taints RayJobs select on, and the
 * hourly cost at full scale. Pure; the platform components and the RayJob shape both read these plans.
 */
import { nodeAllocatable, type NodeAllocatable } from "./catalog/eks-allocatable";
import { defaultDaemonSetReserve, type DaemonSetReserve } from "./catalog/daemonsets";
import {
  acceleratorOf,
  CPU_INSTANCES,
  GPU_INSTANCES,
  type CpuInstanceType,
  type GpuInstanceType,
} from "./catalog/instances";
import { SPOT_WAIT_MINUTES, type GpuCapacityType, type PlatformConfig } from "./config/platform";

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
   * capacity type (a spot node's price is capped at the on-demand price, EC2's default maximum).
   */
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
      labels: {
        [POOL_LABEL]: g.name,
        [ROLE_LABEL]: "gpu",
        [ACCELERATOR_LABEL_KEY]: acceleratorOf(g.instanceType).nodeLabel,
      },
      taints: [GPU_TAINT],
      allocatable: alloc,
      daemonSetReserve: reserve,
      podBudget: podBudget(alloc, reserve),
      usdPerHourAtMax: cost(GPU_INSTANCES[g.instanceType].usdPerHourUsEast1, g.maxNodes),
      availabilityZone: g.availabilityZone,
      efa: g.efa,
      clusterPlacementGroup: g.clusterPlacementGroup,
      rootVolumeGiB: g.rootVolumeGiB,
      spotWaitMinutes:
        g.capacityType === "spot-with-fallback" ? (g.spotWaitMinutes ?? SPOT_WAIT_MINUTES.default) : undefined,
    };
  });
  return { cpu, gpu };
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
