/**
 * The deploy simulation's second half: a scheduler that places pods on the node pools the way the kube-scheduler
 * filters them (node selector, NoSchedule taints and tolerations, requested CPU, memory and GPUs against what a node
 * has left after the kubelet's reserve and the DaemonSets), so a pod no node can ever take is found before deploy.
 * Scoring is modelled as "least allocated" for the platform's own pods (the default scorer spreads them over the
 * nodes that exist) and first fit for the jobs' pods. Pure. Pods are matched once per pool and placed through a tree
 * per pool ({@link indexNodes}), so a check costs a few branches per pod and pool, not a test per node; it decides
 * exactly as filtering every node would (test/core/deploy/schedule-property.test.ts holds it to that).
 *
 * Sources: Kubernetes docs, "Assigning Pods to Nodes", "Taints and Tolerations", "Resource Management for Pods and
 * Containers" (the scheduler counts requests, not use), "Scheduling Framework" (NodeResourcesFit, LeastAllocated).
 */
import type { PoolsPlan } from "../pools";
import type { PodRequest } from "./platform-pods";

/** One node of a pool, with what is still free on it. */
export interface NodeSlot {
  readonly pool: string;
  /** 1-based index within its pool. */
  readonly index: number;
  readonly labels: Readonly<Record<string, string>>;
  /** Keys of its NoSchedule taints. */
  readonly taints: readonly string[];
  cpuMillis: number;
  memoryMiB: number;
  gpus: number;
}

/** A pool's node labels and taints, as its node group gives them. */
export interface PoolNodes {
  readonly pool: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly { readonly key: string }[];
}

/** The nodes of every pool at its min or max size, each with its allocatable less the DaemonSet reserve. */
export function poolNodes(pools: PoolsPlan, groups: readonly PoolNodes[], size: "minNodes" | "maxNodes"): NodeSlot[] {
  return [pools.cpu, ...pools.gpu].flatMap((p) => {
    const group = groups.find((g) => g.pool === p.name)!;
    return Array.from({ length: p[size] }, (_, i) => ({
      pool: p.name,
      index: i + 1,
      labels: group.labels,
      taints: group.taints.map((t) => t.key),
      cpuMillis: p.allocatable.cpuMillis - p.daemonSetReserve.cpuMillis,
      memoryMiB: p.allocatable.memoryMiB - p.daemonSetReserve.memoryMiB,
      gpus: p.allocatable.gpus,
    }));
  });
}

/** Whether a node passes the pod's filters other than room: node selector and taints. */
export const matches = (pod: PodRequest, node: NodeSlot) =>
  Object.entries(pod.nodeSelector).every(([k, v]) => node.labels[k] === v) &&
  (pod.affinityIn ?? []).every((a) => a.values.includes(node.labels[a.key] ?? "")) &&
  node.taints.every((t) => pod.tolerates.includes(t));

const fits = (pod: PodRequest, node: NodeSlot) =>
  node.cpuMillis >= pod.cpuMillis && node.memoryMiB >= pod.memoryMiB && node.gpus >= pod.gpus;

/** A pod that no node takes, and why. */
export interface Unschedulable {
  readonly pod: PodRequest;
  readonly why: string;
}

/** CPU as a person reads it: `6 CPU`, `1.42 CPU`. */
export const cpuText = (millis: number) => `${Math.round(millis) / 1000} CPU`;
/** Memory as a person reads it: `24 GiB`, `23.9 GiB`. */
export const memoryText = (mib: number) => `${Math.floor((mib / 1024) * 10) / 10} GiB`;

/** Why no node takes `pod`: no node passes its filters, or none that does has room (`best`, the roomiest, named). */
function whyUnschedulable(pod: PodRequest, best: NodeSlot | undefined): string {
  if (!best) {
    const selector =
      Object.entries(pod.nodeSelector)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ") || "none";
    return `no node matches its node selector (${selector}) and tolerations (${pod.tolerates.join(", ") || "none"})`;
  }
  return (
    `it requests ${cpuText(pod.cpuMillis)}, ${memoryText(pod.memoryMiB)}${pod.gpus ? `, ${pod.gpus} GPUs` : ""}; the ` +
    `roomiest node that may take it (${best.pool} node ${best.index}) has ${cpuText(best.cpuMillis)}, ` +
    `${memoryText(best.memoryMiB)}${pod.gpus ? `, ${best.gpus} GPUs` : ""} left`
  );
}

/** How pods pick among the matching nodes with room: the one with the most CPU left, or the first in order. */
export type Placement = "spread" | "firstFit";

/** A node of a {@link NodeIndex}: its group, its leaf there, and its position in the indexed array. */
interface Pick {
  readonly group: NodeGroup;
  readonly leaf: number;
  readonly at: number;
}

/**
 * Nodes that share labels and taints (a pool's), in array order, as the leaves of a tree that keeps below each
 * branch the most free CPU, memory and GPUs and the roomiest node (most CPU, then memory, then first in order). A
 * query skips every branch whose maxima cannot fit the pod, so the empty nodes an autoscaler adds cost one branch,
 * not one test each. Figures are finite (they are request sums).
 */
class NodeGroup {
  private readonly size: number;
  private readonly cpu: Float64Array;
  private readonly mem: Float64Array;
  private readonly gpu: Float64Array;
  private readonly best: Int32Array;

  constructor(
    readonly nodes: NodeSlot[],
    readonly at: number[],
  ) {
    this.size = 2 ** Math.ceil(Math.log2(Math.max(1, nodes.length)));
    const extremes = () => new Float64Array(2 * this.size).fill(-Infinity);
    [this.cpu, this.mem, this.gpu] = [extremes(), extremes(), extremes()];
    this.best = new Int32Array(2 * this.size).fill(-1);
    nodes.forEach((n, k) => this.setLeaf(k, n));
    for (let i = this.size - 1; i > 0; i--) this.pull(i);
  }

  private setLeaf(k: number, n: NodeSlot) {
    const i = this.size + k;
    [this.cpu[i], this.mem[i], this.gpu[i], this.best[i]] = [n.cpuMillis, n.memoryMiB, n.gpus, k];
  }

  private pull(i: number) {
    const [l, r] = [2 * i, 2 * i + 1];
    this.cpu[i] = Math.max(this.cpu[l]!, this.cpu[r]!);
    this.mem[i] = Math.max(this.mem[l]!, this.mem[r]!);
    this.gpu[i] = Math.max(this.gpu[l]!, this.gpu[r]!);
    this.best[i] = roomier(this.nodes, this.best[l]!, this.best[r]!);
  }

  /** Re-reads leaf `k` after its node changed. */
  update(k: number) {
    this.setLeaf(k, this.nodes[k]!);
    for (let i = (this.size + k) >> 1; i > 0; i >>= 1) this.pull(i);
  }

  /** The roomiest node, whether or not it has room for anything. */
  roomiest(): number {
    return this.best[1]!;
  }

  /** Whether no leaf below `i` can hold `pod`. */
  private short(i: number, pod: PodRequest): boolean {
    return this.cpu[i]! < pod.cpuMillis || this.mem[i]! < pod.memoryMiB || this.gpu[i]! < pod.gpus;
  }

  /** The first node with room for `pod`, or -1. */
  firstFit(pod: PodRequest, i = 1): number {
    if (this.short(i, pod)) return -1;
    if (i >= this.size) return fits(pod, this.nodes[i - this.size]!) ? i - this.size : -1;
    const left = this.firstFit(pod, 2 * i);
    return left >= 0 ? left : this.firstFit(pod, 2 * i + 1);
  }

  /** The node with room for `pod` and the most CPU left (the first of equals), or `best` when none beats it. */
  mostCpu(pod: PodRequest, best = -1, i = 1): number {
    if (this.short(i, pod) || (best >= 0 && !(this.cpu[i]! > this.nodes[best]!.cpuMillis))) return best;
    if (i >= this.size) return fits(pod, this.nodes[i - this.size]!) ? i - this.size : best;
    return this.mostCpu(pod, this.mostCpu(pod, best, 2 * i), 2 * i + 1);
  }
}

/** Of two leaves, `a` before `b`, the one a stable sort by CPU then memory, most first, puts first; -1 is none. */
function roomier(nodes: readonly NodeSlot[], a: number, b: number): number {
  if (a < 0 || b < 0) return a < 0 ? b : a;
  const [x, y] = [nodes[a]!, nodes[b]!];
  return y.cpuMillis > x.cpuMillis || (y.cpuMillis === x.cpuMillis && y.memoryMiB > x.memoryMiB) ? b : a;
}

/** The first of two picks in the order of the node array, or the one that exists. */
const earlier = (a: Pick | undefined, b: Pick | undefined) => (!a || (b && b.at < a.at) ? b : a);
const nodeOf = (p: Pick) => p.group.nodes[p.leaf]!;
/** The pick with more CPU left (then memory, with `byMemory`), the earlier of equals. */
function more(a: Pick | undefined, b: Pick | undefined, byMemory: boolean): Pick | undefined {
  if (!a || !b) return a ?? b;
  const [x, y] = [nodeOf(a), nodeOf(b)];
  const d = y.cpuMillis - x.cpuMillis || (byMemory ? y.memoryMiB - x.memoryMiB : 0);
  return d > 0 || (d === 0 && b.at < a.at) ? b : a;
}

/** Nodes indexed for placement: places pods on them (which it updates), for good or as a trial it undoes. */
export interface NodeIndex {
  /** Places `pods` in order, as {@link place} does; returns the pods no node could take. */
  place(pods: readonly PodRequest[], how: Placement): Unschedulable[];
  /** As `place`, then gives every node back what the pods took: one what-if placement, in time of its pods. */
  trial(pods: readonly PodRequest[], how: Placement): Unschedulable[];
}

/** Groups `nodes` by labels (the same object, as a pool's nodes share it) and taints, keeping their order. */
function groupNodes(nodes: NodeSlot[]): NodeGroup[] {
  const byLabels = new Map<object, Map<string, { nodes: NodeSlot[]; at: number[] }>>();
  nodes.forEach((n, at) => {
    const byTaints = byLabels.get(n.labels) ?? byLabels.set(n.labels, new Map()).get(n.labels)!;
    const key = JSON.stringify(n.taints);
    const group = byTaints.get(key) ?? byTaints.set(key, { nodes: [], at: [] }).get(key)!;
    group.nodes.push(n);
    group.at.push(at);
  });
  return [...byLabels.values()].flatMap((m) => [...m.values()].map((g) => new NodeGroup(g.nodes, g.at)));
}

/** The node `how` picks for `pod` among the groups it matches, or undefined. */
function pick(pod: PodRequest, groups: readonly NodeGroup[], how: Placement): Pick | undefined {
  let found: Pick | undefined;
  for (const group of groups) {
    const leaf = how === "spread" ? group.mostCpu(pod) : group.firstFit(pod);
    const p = leaf >= 0 ? { group, leaf, at: group.at[leaf]! } : undefined;
    found = how === "spread" ? more(found, p, false) : earlier(found, p);
  }
  return found;
}

/**
 * Indexes `nodes` (a pool's nodes share labels and taints, so a pod's node selector, affinity and tolerations are
 * matched once per pool): each pod then costs a few branches per pool, not a test per node, and picks exactly the
 * node {@link place} describes, with the same refusals.
 */
export function indexNodes(nodes: NodeSlot[]): NodeIndex {
  const groups = groupNodes(nodes);
  const log: { pick: Pick; cpuMillis: number; memoryMiB: number; gpus: number }[] = [];
  const place = (pods: readonly PodRequest[], how: Placement) => {
    const left: Unschedulable[] = [];
    for (const pod of pods) {
      const matching = groups.filter((g) => matches(pod, g.nodes[0]!));
      const found = pick(pod, matching, how);
      if (!found) {
        const roomiest = matching.reduce<Pick | undefined>((best, group) => {
          const leaf = group.roomiest();
          return more(best, { group, leaf, at: group.at[leaf]! }, true);
        }, undefined);
        left.push({ pod, why: whyUnschedulable(pod, roomiest && nodeOf(roomiest)) });
        continue;
      }
      const node = nodeOf(found);
      log.push({ pick: found, cpuMillis: node.cpuMillis, memoryMiB: node.memoryMiB, gpus: node.gpus });
      node.cpuMillis -= pod.cpuMillis;
      node.memoryMiB -= pod.memoryMiB;
      node.gpus -= pod.gpus;
      found.group.update(found.leaf);
    }
    return left;
  };
  return {
    place: (pods, how) => {
      const left = place(pods, how);
      log.length = 0;
      return left;
    },
    trial: (pods, how) => {
      const left = place(pods, how);
      for (const { pick: p, ...was } of log.reverse()) {
        Object.assign(nodeOf(p), was);
        p.group.update(p.leaf);
      }
      log.length = 0;
      return left;
    },
  };
}

/**
 * Places `pods` in order on `nodes` (which it updates): `spread` picks the matching node with the most CPU left,
 * `firstFit` the first matching node with room. Returns the pods no node could take.
 */
export function place(pods: readonly PodRequest[], nodes: NodeSlot[], how: Placement): Unschedulable[] {
  return indexNodes(nodes).place(pods, how);
}

/** A deep copy of nodes, so one simulation does not change another's. */
export const copyNodes = (nodes: readonly NodeSlot[]): NodeSlot[] => nodes.map((n) => ({ ...n }));
