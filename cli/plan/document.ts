/** The JSON contract of `ray-gpu plan --json` (and `plan.json` of `render`, and the base of `diff`). */
import type { PoolPlan } from "../../core/pools";
import { stableJsonPieces } from "../../core/serialize";
import type { StackPlan } from "../../workloads/stack";
import type { WorkloadPlan } from "../../workloads/workload";

/** One pool as `plan --json` prints it. */
export function poolView(p: PoolPlan) {
  return {
    name: p.name,
    role: p.role,
    instanceType: p.instanceType,
    minNodes: p.minNodes,
    maxNodes: p.maxNodes,
    capacityType: p.capacityType,
    labels: p.labels,
    taints: p.taints,
    allocatablePerNode: {
      cpuMillis: p.allocatable.cpuMillis,
      memoryMiB: p.allocatable.memoryMiB,
      gpus: p.allocatable.gpus,
      maxPods: p.allocatable.maxPods,
    },
    daemonSetReserve: p.daemonSetReserve,
    rayPodPerNode: p.podBudget,
    usdPerHourAtMax: p.usdPerHourAtMax,
    // Only a spot-with-fallback pool has it (the plans of other pools stay as they were).
    ...(p.role === "gpu" && p.spotWaitMinutes !== undefined ? { spotWaitMinutes: p.spotWaitMinutes } : {}),
    // Only a pool with fallback instance types: the sizes after its own, and what every node offers at least.
    ...(p.role === "gpu" && p.instanceTypes.length > 1
      ? { fallbackInstanceTypes: p.instanceTypes.slice(1), leastNode: p.node }
      : {}),
  };
}

/** Every reason of a workload's plan, in the order both views print them: memory, tuning, cluster shape. */
export function allDecisions(w: WorkloadPlan) {
  return [...w.memory.decisions, ...w.tuning.decisions, ...w.shape.decisions];
}

/** The kind's tuning as `plan --json` shows it: `train` and `interruptions` (Ray Train), or `data` (Ray Data). */
function tuningView(w: WorkloadPlan): object {
  const t = w.tuning;
  return t.engine === "ray-data" ? { data: t.data } : { train: t.train, interruptions: t.interruptions };
}

/** One workload as `plan --json` prints it: the chosen knobs at the top level, then memory, shape and reasons. */
export function workloadView(w: WorkloadPlan) {
  const { head, worker, lifecycle } = w.shape;
  const m = w.memory;
  return {
    ...m.knobs,
    name: w.name,
    kind: w.kind,
    example: w.example,
    environment: w.environment,
    nodePool: w.nodePool,
    instanceType: w.instanceType,
    ...(w.fallback ? { fallback: w.fallback } : {}),
    gpus: w.gpus,
    model: w.modelName,
    fits: m.fits,
    gpuUtilizationTargetPercent: w.gpuUtilizationTargetPercent,
    memory: m.memory,
    ...("kvCacheBytesPerToken" in m
      ? { kvCacheBytesPerToken: m.kvCacheBytesPerToken, maxConcurrentSequences: m.maxConcurrentSequences }
      : {}),
    advice: m.advice,
    head: { cpus: head.cpus, memoryGiB: head.memoryGiB, objectStoreGiB: head.objectStoreGiB, shmGiB: head.shmGiB },
    worker: {
      replicas: worker.replicas,
      gpusPerWorker: worker.gpusPerWorker,
      cpus: worker.cpus,
      memoryGiB: worker.memoryGiB,
      objectStoreGiB: worker.objectStoreGiB,
      shmGiB: worker.shmGiB,
      heapGiB: worker.heapGiB,
      spillGiB: worker.spillGiB,
      env: worker.env,
    },
    lifecycle,
    ...tuningView(w),
    // Time and cost per run, or null with why the spec does not say enough.
    forecast: w.forecast.forecast ?? null,
    ...(w.forecast.unavailable === undefined ? {} : { forecastUnavailable: w.forecast.unavailable }),
    decisions: allDecisions(w),
  };
}

/** The document of {@link planDocument} but its workloads. */
function planHead(stack: string | undefined, plan: StackPlan) {
  return {
    stack: stack ?? null,
    environment: plan.environment,
    region: plan.region,
    namespace: plan.namespace,
    pools: [plan.pools.cpu, ...plan.pools.gpu].map(poolView),
    notRendered: plan.notRendered.map(({ workload, reason }) => ({ workload, reason })),
    queue: plan.queue ? queueView(plan.queue) : null,
  };
}

/** The JSON document of `ray-gpu plan --json` (and `plan.json` of `render`). */
export function planDocument(stack: string | undefined, plan: StackPlan) {
  return { ...planHead(stack, plan), workloads: plan.workloads.map(workloadView) };
}

/**
 * `stableJson(planDocument(stack, plan))` in pieces, one per workload, each workload's view made when its piece is:
 * how `render` writes plan.json without holding the whole text (a test holds the two equal).
 */
export function planJsonPieces(stack: string | undefined, plan: StackPlan): Iterable<string> {
  function* views() {
    for (const w of plan.workloads) yield workloadView(w);
  }
  return stableJsonPieces(planHead(stack, plan), "workloads", views());
}

/** The queue as `plan --json` prints it: quotas and demand per pool, and who would run or wait. */
function queueView(queue: NonNullable<StackPlan["queue"]>) {
  return {
    name: queue.plan.name,
    waitForPodsReadyMinutes: queue.plan.waitForPodsReadyMinutes,
    pools: queue.admission.pools,
    admitted: queue.admission.admitted,
    queued: queue.admission.queued,
    examples: queue.demands.filter((d) => d.example).map((d) => d.workload),
  };
}
