/**
 * The Kueue objects of a stack's queue, from its {@link QueuePlan}: one ResourceFlavor per pool (selecting the pool's
 * nodes by `ray-gpu.io/pool`, so a pod set only ever matches its own pool's flavor), one ClusterQueue holding each
 * pool's quota, and the LocalQueue the RayJobs name. `ray-gpu render` writes them; `JobQueue` applies them. A
 * spot-with-fallback pool's flavor covers both its node groups (it names no capacity type; see
 * `core/platform/queueing.ts`).
 */
import { KUEUE_API_VERSION, COVERED_RESOURCES, type PoolQuota, type QueuePlan } from "../../core/platform/queueing";
import { POOL_LABEL } from "../../core/pools";
import type { ClusterQueue, LocalQueue, ResourceFlavor } from "../k8s/types";

/**
 * Name of a pool's ResourceFlavor: cluster-scoped, so it carries the namespace of the stack's jobs, joined by a dot
 * (which neither a namespace nor a pool name holds, so two stacks never collide; a DNS subdomain of at most 104
 * characters, well within 253).
 */
export const flavorName = (queue: QueuePlan, pool: string) => `${queue.namespace}.${pool}`;

/** Name of the stack's ClusterQueue (cluster-scoped: one per workload namespace). */
export const clusterQueueName = (queue: QueuePlan) => `${queue.namespace}.${queue.name}`;

function flavor(queue: QueuePlan, q: PoolQuota, labels: Record<string, string>): ResourceFlavor {
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: "ResourceFlavor",
    metadata: { name: flavorName(queue, q.pool), labels: { ...labels } },
    spec: { nodeLabels: { [POOL_LABEL]: q.pool } },
  };
}

/** CPUs as a quantity: whole CPUs as a number, else millicores (`6830m`), never floored. */
export function cpuQuantity(cpus: number): string {
  const millis = Math.round(cpus * 1000);
  return millis % 1000 === 0 ? String(millis / 1000) : `${millis}m`;
}

/** GiB as a quantity: whole GiB as `Gi`, else MiB (`34262Mi`), never floored. */
export function memoryQuantity(gib: number): string {
  const mib = Math.round(gib * 1024);
  return mib % 1024 === 0 ? `${mib / 1024}Gi` : `${mib}Mi`;
}

/** Quota as Kubernetes quantities, in {@link COVERED_RESOURCES} order (Kueue requires the same order). */
const quotaResources = (q: PoolQuota) => [
  { name: "cpu", nominalQuota: cpuQuantity(q.cpus) },
  { name: "memory", nominalQuota: memoryQuantity(q.memoryGiB) },
  { name: "nvidia.com/gpu", nominalQuota: String(q.gpus) },
];

function clusterQueue(queue: QueuePlan, labels: Record<string, string>): ClusterQueue {
  return {
    apiVersion: KUEUE_API_VERSION,
    kind: "ClusterQueue",
    metadata: { name: clusterQueueName(queue), labels: { ...labels } },
    spec: {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": queue.namespace } },
      queueingStrategy: "BestEffortFIFO",
      resourceGroups: [
        {
          coveredResources: [...COVERED_RESOURCES],
          flavors: queue.quotas.map((q) => ({ name: flavorName(queue, q.pool), resources: quotaResources(q) })),
        },
      ],
    },
  };
}

/** The queue's objects: flavors, the ClusterQueue, and the LocalQueue in the workload namespace. */
export function queueObjects(
  queue: QueuePlan,
  labels: Readonly<Record<string, string>>,
): [...ResourceFlavor[], ClusterQueue, LocalQueue] {
  const local: LocalQueue = {
    apiVersion: KUEUE_API_VERSION,
    kind: "LocalQueue",
    metadata: { name: queue.name, namespace: queue.namespace, labels: { ...labels } },
    spec: { clusterQueue: clusterQueueName(queue) },
  };
  return [...queue.quotas.map((q) => flavor(queue, q, { ...labels })), clusterQueue(queue, { ...labels }), local];
}
