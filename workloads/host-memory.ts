/**
 * The host-memory check of a memory plan: CPU offload must fit in the worker pod's heap. Pure; used by
 * `./workload.ts` once the cluster shape is known.
 */
import { GPU_INSTANCE_TYPES, GPU_INSTANCES, hostMemoryGiBPerGpu } from "../core/catalog/instances";
import type { ClusterShapePlan } from "../core/cluster/shape";
import { ADVICE_GPU_COUNTS } from "../core/memory/advice";
import type { GpuPoolPlan } from "../core/pools";
import type { WorkloadKind } from "../core/config/workloads";
import type { MemoryPlanOf } from "./kinds/api/strategy";

/** CPU offload fits the worker's heap: none is needed, or it needs no more than the heap. The one definition. */
export const hostMemoryFits = (offloadGiBPerNode: number, heapGiB: number) =>
  offloadGiBPerNode === 0 || offloadGiBPerNode <= heapGiB;

/**
 * CPU offload must fit in the worker pod's heap (memory outside /dev/shm), or the node swaps and dies. When it does not,
 * the advice re-plans: the smallest GPU count whose offload fits the heap, and the g5 sizes with more RAM per GPU.
 */
export function withHostMemoryCheck<M extends MemoryPlanOf<WorkloadKind>>(
  m: M,
  shape: ClusterShapePlan,
  pool: GpuPoolPlan,
  replan: (gpus: number) => M,
): M {
  const need = m.memory.cpuOffloadGiBPerNode;
  const heap = shape.worker.heapGiB;
  if (hostMemoryFits(need, heap)) return m;
  const advice = [
    `does not fit in host memory: offloading needs ${need} GiB per node (DeepSpeed's estimate) but the worker has ${heap} GiB ` +
      `outside /dev/shm`,
  ];
  for (const gpus of ADVICE_GPU_COUNTS.filter((g) => g > m.knobs.gpus)) {
    const alt = replan(gpus);
    if (!alt.fits || !hostMemoryFits(alt.memory.cpuOffloadGiBPerNode, heap)) continue;
    advice.push(`use gpus: ${gpus} (offload then needs ${alt.memory.cpuOffloadGiBPerNode} GiB per node)`);
    break;
  }
  const gpu = GPU_INSTANCES[pool.instanceType].accelerator;
  const roomier = GPU_INSTANCE_TYPES.filter(
    (t) => GPU_INSTANCES[t].accelerator === gpu && hostMemoryGiBPerGpu(t) > pool.node.hostMemoryGiBPerGpu,
  );
  if (roomier.length > 0)
    advice.push(
      `use a pool of ${roomier.map((t) => `${t} (${hostMemoryGiBPerGpu(t)} GiB RAM per GPU)`).join(", ")} ` +
        `(${pool.node.binding.hostMemoryGiBPerGpu} has ${pool.node.hostMemoryGiBPerGpu} GiB RAM per GPU)`,
    );
  return { ...m, fits: false, advice: [...m.advice, ...advice] };
}
