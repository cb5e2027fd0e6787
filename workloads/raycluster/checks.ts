/**
 * Checks of a `RayClusterSpec` at plan time, wherever it sits (a RayJob's `spec.rayClusterSpec`, a RayService's): what
 * KubeRay (v1.7.0, `ray-operator/controllers/ray/utils/validation.go`, `ValidateRayClusterSpec`) and the scheduler
 * would only report after apply. GPU on the head, workers larger than their node, missing tolerations, replica bounds,
 * and an object store larger than /dev/shm; one named check per concern.
 */
import { SHM_PATH } from "../../core/cluster/shape";
import { POOL_LABEL, type GpuPoolPlan, type PoolsPlan } from "../../core/pools";
import { GIB, parseQuantity } from "../../core/quantity";
import type { PodSpec, RayClusterSpec, RayStartParams, WorkerGroupSpec } from "../k8s/types";

/** Records a problem at a path inside the Ray resource. */
export type Report = (path: string, message: string, value?: unknown) => void;

/** Every problem of the cluster spec at `at` (its path in the resource) against the stack's pools. */
export function checkRayClusterSpec(cluster: RayClusterSpec, at: string, pools: PoolsPlan, report: Report): void {
  checkHead(cluster, at, report);
  cluster.workerGroupSpecs.forEach((group, i) =>
    checkWorkerGroup(group, `${at}.workerGroupSpecs[${i}]`, pools, report),
  );
}

/** The head runs no work and has no GPU. */
function checkHead(cluster: RayClusterSpec, clusterAt: string, report: Report): void {
  const at = `${clusterAt}.headGroupSpec`;
  const head = cluster.headGroupSpec;
  const limits = head.template.spec.containers[0]?.resources.limits;
  if (head.rayStartParams["num-cpus"] !== "0")
    report(
      `${at}.rayStartParams.num-cpus`,
      'the head must run no work: set num-cpus "0"',
      head.rayStartParams["num-cpus"],
    );
  if (limits?.["nvidia.com/gpu"] !== undefined || (head.rayStartParams["num-gpus"] ?? "0") !== "0") {
    report(
      `${at}.template.spec.containers[0].resources.limits`,
      "the head must not get a GPU: it belongs on the CPU pool",
      limits?.["nvidia.com/gpu"],
    );
  }
  checkObjectStore(head.rayStartParams, head.template.spec, at, report);
}

/** Bytes of the memory-backed volume mounted at /dev/shm, or undefined. */
function shmBytes(pod: PodSpec): number | undefined {
  const mount = pod.containers[0]?.volumeMounts?.find((m) => m.mountPath === SHM_PATH);
  const vol = mount && pod.volumes?.find((v) => v.name === mount.name);
  const size = vol?.emptyDir?.medium === "Memory" ? vol.emptyDir.sizeLimit : undefined;
  return size === undefined ? undefined : parseQuantity(size);
}

/** An explicit object store must fit in a memory-backed /dev/shm, or Ray falls back to disk-backed memory. */
function checkObjectStore(params: RayStartParams, pod: PodSpec, at: string, report: Report): void {
  const store = params["object-store-memory"];
  if (store === undefined) return;
  const shm = shmBytes(pod);
  if (shm === undefined)
    return report(
      `${at}.template.spec.volumes`,
      "object-store-memory is set but no memory-backed volume is mounted at /dev/shm",
    );
  if (Number(store) > shm) {
    const [storeGiB, shmGiB] = [(Number(store) / GIB).toFixed(1), (shm / GIB).toFixed(1)];
    report(
      `${at}.rayStartParams.object-store-memory`,
      `object store (${storeGiB} GiB) must fit in /dev/shm (${shmGiB} GiB), or Ray falls back to slow disk-backed memory`,
      store,
    );
  }
}

/** Replica bounds, the pool the group selects, and pods that fit its nodes and tolerate its taints. */
function checkWorkerGroup(g: WorkerGroupSpec, at: string, pools: PoolsPlan, report: Report): void {
  if (g.minReplicas > g.maxReplicas)
    report(
      `${at}.minReplicas`,
      `worker group ${g.groupName} has minReplicas ${g.minReplicas} greater than maxReplicas ${g.maxReplicas}`,
      g.minReplicas,
    );
  if (g.replicas < g.minReplicas || g.replicas > g.maxReplicas)
    report(
      `${at}.replicas`,
      `replicas must be between minReplicas (${g.minReplicas}) and maxReplicas (${g.maxReplicas})`,
      g.replicas,
    );
  checkObjectStore(g.rayStartParams, g.template.spec, at, report);
  const poolName = g.template.spec.nodeSelector?.[POOL_LABEL];
  const pool = pools.gpu.find((p) => p.name === poolName);
  if (!pool)
    return report(
      `${at}.template.spec.nodeSelector`,
      `must select a GPU pool with ${POOL_LABEL}; pools are ${pools.gpu.map((p) => p.name).join(", ")}`,
      poolName,
    );
  if (g.replicas > pool.maxNodes)
    report(`${at}.replicas`, `pool "${pool.name}" has at most ${pool.maxNodes} nodes`, g.replicas);
  checkFitsNode(g.template.spec, pool, `${at}.template.spec`, report);
}

/** The worker's limits fit one node's Ray-pod budget, and it tolerates every taint of the pool. */
function checkFitsNode(pod: PodSpec, pool: GpuPoolPlan, at: string, report: Report): void {
  const limits = pod.containers[0]?.resources.limits;
  const b = pool.podBudget;
  const limitsAt = `${at}.containers[0].resources.limits`;
  if (parseQuantity(limits?.cpu ?? "0") > b.cpus)
    report(`${limitsAt}.cpu`, `a ${pool.instanceType} node offers ${b.cpus} CPUs to a Ray pod`, limits?.cpu);
  if (parseQuantity(limits?.memory ?? "0") > b.memoryGiB * GIB)
    report(`${limitsAt}.memory`, `a ${pool.instanceType} node offers ${b.memoryGiB}Gi to a Ray pod`, limits?.memory);
  if (parseQuantity(limits?.["nvidia.com/gpu"] ?? "0") > b.gpus)
    report(
      `${limitsAt}.nvidia.com/gpu`,
      `a ${pool.instanceType} node has ${b.gpus} GPU(s)`,
      limits?.["nvidia.com/gpu"],
    );
  for (const t of pool.taints) {
    const ok = pod.tolerations?.some(
      (tol) => tol.key === t.key && tol.effect === t.effect && (tol.operator === "Exists" || tol.value === t.value),
    );
    if (!ok)
      report(
        `${at}.tolerations`,
        `must tolerate the pool's taint ${t.key}=${t.value}:${t.effect}, or no node will take the pod`,
      );
  }
}
