/**
 * Where the platform's own pods land and what that leaves for Ray: the pools at their min size (the nodes that exist
 * when `pulumi up` installs the add-ons) take the platform's pods, spread as the default scorer spreads them; the
 * nodes the autoscaler may add up to max size come empty. The CPU pool's queue quota is what is left there, so
 * Kueue never admits a head the pool cannot hold. Pure.
 */
import type { PoolsPlan } from "../pools";
import { kueueRelease } from "../platform/queueing";
import type { HelmReleasePlan } from "../platform/addons";
import { efaDaemonSets, gpuDaemonSets, platformPods, type PlatformPodsInput, type PodRequest } from "./platform-pods";
import { copyNodes, matches, place, poolNodes, type NodeSlot, type PoolNodes, type Unschedulable } from "./schedule";

/** The pools at max size once the platform's pods are placed. */
export interface PlatformLayout {
  /** Every node of every pool at max size, with what is left on it. */
  readonly nodes: readonly NodeSlot[];
  /**
   * Platform pods no node at min size can take. `pulumi up` fails on those it waits for (see `awaitedBy` in
   * `./platform-pods.ts`); the others (Prometheus) stay Pending after a deploy that succeeds.
   */
  readonly unplaced: readonly Unschedulable[];
  /**
   * GPU DaemonSets (and on EFA pools the EFA device plugin) that a GPU pool's nodes would not run (selector, affinity
   * or the GPU taint), by pool.
   */
  readonly missingDaemonSets: readonly { readonly pool: string; readonly daemonSet: string }[];
}

/** Places the platform's pods on the pools at min size, and adds the empty nodes up to max size. */
export function platformLayout(
  pools: PoolsPlan,
  groups: readonly PoolNodes[],
  pods: {
    readonly platform: readonly PodRequest[];
    readonly gpuDaemonSets: readonly PodRequest[];
    /** DaemonSets every EFA pool's nodes must run too. @default [] */
    readonly efaDaemonSets?: readonly PodRequest[];
  },
): PlatformLayout {
  const atMin = poolNodes(pools, groups, "minNodes");
  const unplaced = place(pods.platform, atMin, "spread");
  const existing = new Set(atMin.map((m) => `${m.pool}/${m.index}`));
  const added = poolNodes(pools, groups, "maxNodes").filter((n) => !existing.has(`${n.pool}/${n.index}`));
  const oneOfEach = poolNodes({ ...pools, cpu: { ...pools.cpu, maxNodes: 0 } }, groups, "maxNodes");
  const missingDaemonSets = pools.gpu.flatMap((p) => {
    const node = oneOfEach.find((n) => n.pool === p.name);
    const sets = [...pods.gpuDaemonSets, ...(p.efa ? (pods.efaDaemonSets ?? []) : [])];
    return node ? sets.filter((d) => !matches(d, node)).map((d) => ({ pool: p.name, daemonSet: d.name })) : [];
  });
  return { nodes: [...atMin, ...added], unplaced, missingDaemonSets };
}

/** What the layout follows from: the pools and their node groups, the cluster's mode, the releases. */
export interface LayoutInput extends PlatformPodsInput {
  readonly pools: PoolsPlan;
  readonly groups: readonly PoolNodes[];
  readonly helm: PlatformPodsInput["helm"] & {
    readonly nvidiaDevicePlugin: HelmReleasePlan;
    readonly efaDevicePlugin?: HelmReleasePlan | undefined;
  };
  /** Kueue runs (`queueing.enabled`). */
  readonly queueing: boolean;
}

/** Lays out the platform's pods and checks its GPU DaemonSets against every GPU pool. */
export function planLayout(input: LayoutInput): PlatformLayout {
  const queueRelease = input.queueing ? kueueRelease(input.pools.cpu.name) : undefined;
  return platformLayout(input.pools, input.groups, {
    platform: platformPods(input, queueRelease),
    gpuDaemonSets: gpuDaemonSets(input),
    efaDaemonSets: efaDaemonSets(input),
  });
}

/**
 * CPUs (to the millicore) and GiB (to the MiB) left for Ray pods on a pool at max size, summed node by node: the
 * queue's quota is a Kubernetes quantity, so nothing is floored to whole CPUs (Kueue counts a 6.5-CPU head and
 * submitter against it exactly).
 */
export function poolRoomLeft(layout: PlatformLayout, pool: string): { cpus: number; memoryGiB: number } {
  const nodes = layout.nodes.filter((n) => n.pool === pool);
  return {
    cpus: nodes.reduce((s, n) => s + Math.max(0, Math.round(n.cpuMillis)), 0) / 1000,
    memoryGiB: nodes.reduce((s, n) => s + Math.max(0, Math.round(n.memoryMiB)), 0) / 1024,
  };
}

/** A fresh copy of the layout's nodes, for one what-if placement. */
export const layoutNodes = (layout: PlatformLayout): NodeSlot[] => copyNodes(layout.nodes);
