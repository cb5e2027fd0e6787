/** Views of a {@link StackPlan}: the JSON contract of `ray-gpu plan --json` and the text for people. */
import type { PoolPlan } from "../core/pools";
import type { StackPlan } from "../workloads/stack";
import type { WorkloadPlan } from "../workloads/workload";

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
  };
}

/** Every reason of a workload's plan, in the order both views print them: memory, tuning, cluster shape. */
function allDecisions(w: WorkloadPlan) {
  return [...w.memory.decisions, ...w.tuning.decisions, ...w.shape.decisions];
}

/** The kind's tuning as `plan --json` shows it: `train` (training kinds) or `data` (Ray Data kinds). */
function tuningView(w: WorkloadPlan): object {
  const { decisions: _decisions, ...sections } = w.tuning;
  return sections;
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
    decisions: allDecisions(w),
  };
}

/** The JSON document of `ray-gpu plan --json` (and `plan.json` of `render`). */
export function planDocument(stack: string | undefined, plan: StackPlan) {
  return {
    stack: stack ?? null,
    environment: plan.environment,
    region: plan.region,
    namespace: plan.namespace,
    pools: [plan.pools.cpu, ...plan.pools.gpu].map(poolView),
    workloads: plan.workloads.map(workloadView),
    notRendered: plan.notRendered.map(({ workload, reason }) => ({ workload, reason })),
    queue: plan.queue ? queueView(plan.queue) : null,
  };
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

/** Lines on the queue: per pool the GPUs (and CPUs) asked against the quota, then who would wait for what. */
function queueLines(queue: StackPlan["queue"]): string[] {
  if (!queue)
    return ["Queue: off (platform.queueing.enabled: false): jobs start at once and may fail their deadline", ""];
  const { admission, plan } = queue;
  const examples = new Set(queue.demands.filter((d) => d.example).map((d) => d.workload));
  const name = (w: string) => (examples.has(w) ? `${w} [example]` : w);
  const out = [
    `Queue ${plan.name} (Kueue; quota = maxNodes x Ray pod per node; every planned job submitted at once, in order;` +
      ` [example] jobs are not submitted by pulumi up)`,
  ];
  const rows = [["POOL", "GPUS ASKED/QUOTA", "CPUS ASKED/QUOTA"]];
  for (const p of admission.pools)
    rows.push([p.pool, `${p.askedGpus}/${p.quotaGpus}`, `${p.askedCpus}/${p.quotaCpus}`]);
  out.push(...table(rows));
  out.push(`  run at once: ${admission.admitted.length ? admission.admitted.map(name).join(", ") : "none"}`);
  for (const q of admission.queued)
    out.push(`  ${name(q.workload)} would queue: waits for quota on pool ${q.waitsFor}`);
  if (admission.queued.length === 0) out.push("  nothing would queue");
  out.push(
    `  (a job admitted but not running within ${plan.waitForPodsReadyMinutes} min goes back to the queue; its ` +
      `deadlines count from admission)`,
    "",
  );
  return out;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd());
}

/** One line on a workload's GPU memory: the verdict, the requirement, and the breakdown of its peak. */
function memoryLine(mem: WorkloadPlan["memory"]["memory"]): string {
  const parts = Object.entries(mem.breakdownGiB)
    .filter(([k, v]) => v > 0 && k !== "modelStates")
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
  const verdict = mem.fits ? "fits" : "DOES NOT FIT";
  return (
    `  GPU memory: ${verdict}: requires ${mem.requiredGiB} GiB ` +
    `of ${mem.usableGiB} GiB per GPU (allocated peak ${mem.allocatedPeakGiB} ` +
    `GiB: ${parts})`
  );
}

/** The text of `ray-gpu plan`. */
export function planText(stack: string | undefined, plan: StackPlan): string {
  const out: string[] = [];
  out.push(
    `Stack ${stack ?? "(workload file)"}: environment ${plan.environment}, region ${plan.region}, namespace ${plan.namespace}`,
    "",
  );
  out.push(
    "Node pools (allocatable per node after kube-reserved and eviction; Ray pod = what one Ray pod may request after DaemonSets)",
  );
  const rows = [["NAME", "ROLE", "INSTANCE", "NODES", "CAPACITY", "ALLOCATABLE/NODE", "RAY POD/NODE", "$/H AT MAX"]];
  for (const p of [plan.pools.cpu, ...plan.pools.gpu]) {
    const gpus = p.allocatable.gpus ? `, ${p.allocatable.gpus} GPU` : "";
    rows.push([
      p.name,
      p.role,
      p.instanceType,
      `${p.minNodes}-${p.maxNodes}`,
      p.capacityType,
      `${p.allocatable.cpuMillis}m CPU, ${(p.allocatable.memoryMiB / 1024).toFixed(1)} GiB${gpus}`,
      `${p.podBudget.cpus} CPU, ${p.podBudget.memoryGiB} GiB${gpus}`,
      p.usdPerHourAtMax.toFixed(2),
    ]);
  }
  out.push(...table(rows), "  (prices: approximate us-east-1 on-demand list prices; spot is cheaper and varies)", "");
  out.push(...queueLines(plan.queue));
  if (plan.workloads.length === 0) out.push("Workloads: none (add entries under ray-gpu:workloads)");
  // Jobs rendered with their PrometheusRule (the stack has observability).
  const alerted = new Set(
    plan.objects.filter((o) => o.objects.some((k) => k.kind === "PrometheusRule")).map((o) => o.workload),
  );
  for (const w of plan.workloads) {
    const s = w.shape;
    const mem = w.memory.memory;
    const example = w.example ? " [example: rendered, not submitted by pulumi up]" : "";
    out.push(
      `Workload ${w.name} (${w.kind}, ${w.modelName}): ${w.gpus} GPUs on pool ${w.nodePool} = ${s.worker.replicas} ` +
        `x ${w.instanceType}${example}`,
    );
    out.push(memoryLine(mem));
    out.push(
      `  knobs: ${Object.entries(w.memory.knobs)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(", ")}`,
    );
    for (const a of w.memory.advice) out.push(`  ! ${a}`);
    out.push(
      `  head: ${s.head.cpus} CPU, ${s.head.memoryGiB} GiB, object store ${s.head.objectStoreGiB} GiB, num-cpus 0`,
    );
    out.push(
      `  worker: ${s.worker.replicas} x (${s.worker.gpusPerWorker} GPU, ${s.worker.cpus} CPU, ${s.worker.memoryGiB} ` +
        `GiB; object store ${s.worker.objectStoreGiB} GiB in /dev/shm ${s.worker.shmGiB} GiB; spill ${s.worker.spillGiB} ` +
        `GiB on NVMe)`,
    );
    if (alerted.has(w.name))
      out.push(
        `  alerts: GPU utilization below ${w.gpuUtilizationTargetPercent}% for 15 min, any spilling, pods pending ` +
          `for 75% of the ${s.lifecycle.preRunningDeadlineSeconds / 60} min pre-running deadline`,
      );
    out.push("  why:");
    for (const d of allDecisions(w)) out.push(`    ${d.key} = ${String(d.value)}: ${d.reason}`);
    out.push("");
  }
  for (const n of plan.notRendered) out.push(`Not rendered: ${n.workload}: ${n.reason}`);
  return out.join("\n");
}
