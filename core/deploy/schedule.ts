/**
 * The deploy simulation's second half: a scheduler that places pods on the node pools the way the kube-scheduler
 * filters them (node selector, NoSchedule taints and tolerations, requested CPU, memory and GPUs against what a node
 * has left after the kubelet's reserve and the DaemonSets), so a pod no node can ever take is found before deploy.
 * Scoring is modelled as "least allocated" for the platform's own pods (the default scorer spreads them over the
 * nodes that exist) and first fit for the jobs' pods. Pure.
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

/** Why no node takes `pod`: no node passes its filters, or none that does has room (the roomiest named). */
function whyUnschedulable(pod: PodRequest, nodes: readonly NodeSlot[]): string {
  const candidates = nodes.filter((n) => matches(pod, n));
  if (!candidates.length) {
    const selector =
      Object.entries(pod.nodeSelector)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ") || "none";
    return `no node matches its node selector (${selector}) and tolerations (${pod.tolerates.join(", ") || "none"})`;
  }
  const best = candidates.toSorted((a, b) => b.cpuMillis - a.cpuMillis || b.memoryMiB - a.memoryMiB)[0]!;
  return (
    `it requests ${cpuText(pod.cpuMillis)}, ${memoryText(pod.memoryMiB)}${pod.gpus ? `, ${pod.gpus} GPUs` : ""}; the ` +
    `roomiest node that may take it (${best.pool} node ${best.index}) has ${cpuText(best.cpuMillis)}, ` +
    `${memoryText(best.memoryMiB)}${pod.gpus ? `, ${best.gpus} GPUs` : ""} left`
  );
}

/**
 * Places `pods` in order on `nodes` (which it updates): `spread` picks the matching node with the most CPU left,
 * `firstFit` the first matching node with room. Returns the pods no node could take.
 */
export function place(pods: readonly PodRequest[], nodes: NodeSlot[], how: "spread" | "firstFit"): Unschedulable[] {
  const left: Unschedulable[] = [];
  for (const pod of pods) {
    const room = nodes.filter((n) => matches(pod, n) && fits(pod, n));
    const node = how === "spread" ? room.toSorted((a, b) => b.cpuMillis - a.cpuMillis)[0] : room[0];
    if (!node) {
      left.push({ pod, why: whyUnschedulable(pod, nodes) });
      continue;
    }
    node.cpuMillis -= pod.cpuMillis;
    node.memoryMiB -= pod.memoryMiB;
    node.gpus -= pod.gpus;
  }
  return left;
}

/** A deep copy of nodes, so one simulation does not change another's. */
export const copyNodes = (nodes: readonly NodeSlot[]): NodeSlot[] => nodes.map((n) => ({ ...n }));
