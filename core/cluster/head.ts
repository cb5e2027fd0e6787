/**
 * The Ray head: on the CPU pool, `num-cpus: "0"` and no GPU so no task or actor lands on it, sized for the
 * cluster it coordinates (GCS, dashboard and the job's driver all run here) instead of a fixed guess.
 */
import { CPU_INSTANCE_TYPES, type CpuInstanceType } from "../catalog/instances";
import { nodeAllocatable } from "../catalog/eks-allocatable";
import type { DecisionLog } from "../decisions";
import type { IssueCollector } from "../errors";
import { podBudget, POOL_LABEL, type CpuPoolPlan } from "../pools";

/** Head sizing rule: a base for GCS, dashboard and driver, plus a share per worker node. */
export const HEAD_SIZING = {
  baseCpus: 2,
  workersPerExtraCpu: 2,
  maxCpus: 16,
  baseMemoryGiB: 8,
  memoryGiBPerWorker: 2,
  maxMemoryGiB: 128,
  objectStoreFraction: 0.25,
  shmExtraGiB: 1,
} as const;

/** The head group of the plan. */
export interface HeadPlan {
  readonly cpus: number;
  readonly memoryGiB: number;
  readonly objectStoreGiB: number;
  readonly shmGiB: number;
  readonly nodeSelector: Readonly<Record<string, string>>;
}

/** Head CPUs and memory for a cluster of `workers` worker nodes. */
export function headSize(workers: number): { cpus: number; memoryGiB: number } {
  const h = HEAD_SIZING;
  return {
    cpus: Math.min(h.maxCpus, h.baseCpus + Math.ceil(workers / h.workersPerExtraCpu)),
    memoryGiB: Math.min(h.maxMemoryGiB, h.baseMemoryGiB + h.memoryGiBPerWorker * workers),
  };
}

/** Smallest CPU instance type whose pod budget fits `cpus` and `memoryGiB`, for the error's fix. */
function smallestFitting(
  cpus: number,
  memoryGiB: number,
  reserve: CpuPoolPlan["daemonSetReserve"],
): CpuInstanceType | undefined {
  const fits = CPU_INSTANCE_TYPES.filter((t) => {
    const b = podBudget(nodeAllocatable(t), reserve);
    return b.cpus >= cpus && b.memoryGiB >= memoryGiB;
  });
  return fits.toSorted((a, b) => nodeAllocatable(a).cpuMillis - nodeAllocatable(b).cpuMillis)[0];
}

/** Why each head value is what it is. */
const WHY_HEAD = {
  numCpus:
    'rayStartParams num-cpus "0" and no GPU: Ray schedules no task or actor on the head, which keeps GCS and the ' +
    "driver responsive",
  cpus: (workers: number, pool: CpuPoolPlan, h = HEAD_SIZING) =>
    `${h.baseCpus} CPUs for GCS, dashboard and the driver + 1 per ${h.workersPerExtraCpu} worker nodes (${workers}), ` +
    `at most ${h.maxCpus}; on the CPU pool "${pool.name}"`,
  memory: (workers: number, h = HEAD_SIZING) =>
    `${h.baseMemoryGiB} GiB + ${h.memoryGiBPerWorker} GiB per worker node (${workers}), at most ${h.maxMemoryGiB}: ` +
    "GCS and dashboard memory grow with the node count",
  objectStore: (h = HEAD_SIZING) =>
    `${h.objectStoreFraction * 100}% of the head's memory, for objects the driver puts or fetches; the rest stays ` +
    "for GCS, dashboard and driver heap",
};

/** The head must fit one node of the CPU pool; the error names the smallest size that would. */
function checkHeadFits(
  size: { cpus: number; memoryGiB: number },
  args: { workers: number; pool: CpuPoolPlan; path: string; issues: IssueCollector },
) {
  const { pool } = args;
  if (size.cpus <= pool.podBudget.cpus && size.memoryGiB <= pool.podBudget.memoryGiB) return;
  const fix = smallestFitting(size.cpus, size.memoryGiB, pool.daemonSetReserve);
  const message =
    `the Ray head of ${args.path} (${args.workers} worker nodes) needs ${size.cpus} CPUs and ${size.memoryGiB} GiB, ` +
    `but a ${pool.instanceType} node offers ${pool.podBudget.cpus} CPUs and ${pool.podBudget.memoryGiB} GiB` +
    (fix ? `; use ${fix} or larger` : "");
  args.issues.add("ray-gpu:platform.cpuNodeGroup.instanceType", message, pool.instanceType);
}

/** Plans the head for `workers` worker nodes on `pool`, recording decisions and problems. */
export function planHead(args: {
  workers: number;
  pool: CpuPoolPlan;
  path: string;
  issues: IssueCollector;
  log: DecisionLog;
}): HeadPlan {
  const { workers, pool, log } = args;
  const size = headSize(workers);
  checkHeadFits(size, args);
  const objectStoreGiB = Math.max(1, Math.floor(size.memoryGiB * HEAD_SIZING.objectStoreFraction));
  log.decide("head.numCpus", "0", WHY_HEAD.numCpus);
  log.decide("head.cpus", size.cpus, WHY_HEAD.cpus(workers, pool));
  log.decide("head.memoryGiB", size.memoryGiB, WHY_HEAD.memory(workers));
  log.decide("head.objectStoreGiB", objectStoreGiB, WHY_HEAD.objectStore());
  const shmGiB = objectStoreGiB + HEAD_SIZING.shmExtraGiB;
  return {
    cpus: size.cpus,
    memoryGiB: size.memoryGiB,
    objectStoreGiB,
    shmGiB,
    nodeSelector: { [POOL_LABEL]: pool.name },
  };
}
