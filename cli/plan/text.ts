/** The text of `ray-gpu plan`, for people: pools, queue, and each workload with its reasons. */
import { lostWorkText } from "../../core/reliability/interruption";
import { capacityCostNote, type GpuPoolPlan } from "../../core/pools";
import type { StackPlan } from "../../workloads/stack";
import type { WorkloadPlan } from "../../workloads/workload";
import type { FallbackFit } from "../../workloads/fallback-memory";
import type { WorkloadSpec } from "../../core/config/workloads";
import { envRedirects } from "../../core/config/env-rules";
import { pipVerification, type PipVerification } from "../../core/config/pip";
import { allDecisions } from "./document";
import { forecastLines } from "./forecast-text";
import { COLUMNS, wrapped } from "../output/columns";

/** `text` after `indent`, wrapped with a hanging indent (2 more spaces unless `hang` says) at the plan's width. */
type Wrap = (text: string, indent?: string, hang?: string) => string[];

/** A {@link Wrap} at `columns`. */
const wrapAt =
  (columns: number): Wrap =>
  (text, indent = "", hang = `${indent}  `) =>
    wrapped(text, indent, hang, columns);

/** A heading's later lines: deeper than the lines under it (2 spaces), so they do not read as one of them. */
const HEADING_HANG = "    ";

/** Each line wrapped after its own leading spaces; a line at the margin is a heading ({@link HEADING_HANG}). */
function fit(lines: readonly string[], wrap: Wrap): string[] {
  return lines.flatMap((line) => {
    const indent = /^ */.exec(line)![0];
    return line === "" ? [""] : wrap(line.slice(indent.length), indent, indent === "" ? HEADING_HANG : undefined);
  });
}

/** Lines on the queue: per pool the GPUs (and CPUs) asked against the quota, then who would wait for what. */
function queueLines(queue: StackPlan["queue"], wrap: Wrap): string[] {
  if (!queue)
    return [
      ...wrap("Queue: off (platform.queueing.enabled: false): jobs start at once and may fail their deadline"),
      "",
    ];
  const { admission, plan } = queue;
  const examples = new Set(queue.demands.filter((d) => d.example).map((d) => d.workload));
  const name = (w: string) => (examples.has(w) ? `${w} [example]` : w);
  const out = wrap(
    `Queue ${plan.name} (Kueue; quota: a GPU pool's maxNodes x Ray pod per node, the CPU pool's room left after the ` +
      `platform's pods, to the millicore; every planned job submitted at once, in order;` +
      ` [example] jobs are not submitted by pulumi up)`,
    "",
    HEADING_HANG,
  );
  const cpus = (n: number) => String(Number(n.toFixed(3)));
  const rows = [["POOL", "GPUS ASKED/QUOTA", "CPUS ASKED/QUOTA"]];
  for (const p of admission.pools)
    rows.push([p.pool, `${p.askedGpus}/${p.quotaGpus}`, `${cpus(p.askedCpus)}/${cpus(p.quotaCpus)}`]);
  out.push(...table(rows));
  out.push(
    ...wrap(`run at once: ${admission.admitted.length ? admission.admitted.map(name).join(", ") : "none"}`, "  "),
  );
  for (const q of admission.queued)
    out.push(...wrap(`${name(q.workload)} would queue: waits for quota on pool ${q.waitsFor}`, "  "));
  if (admission.queued.length === 0) out.push("  nothing would queue");
  const queuedExamples = admission.queued.filter((q) => examples.has(q.workload)).length;
  if (queuedExamples > 0) {
    const who =
      queuedExamples === admission.queued.length
        ? "every waiting job is an [example], on purpose"
        : `${queuedExamples} of the ${admission.queued.length} waiting jobs are [example] jobs`;
    out.push(
      ...wrap(
        `(${who}: pulumi up submits no [example] job, so none of them waits; they show how the pools' quota would ` +
          `share out if they were submitted together)`,
        "  ",
      ),
    );
  }
  out.push(
    ...wrap(
      `(a job admitted but not running within ${plan.waitForPodsReadyMinutes} min goes back to the queue; its ` +
        `deadlines count from admission)`,
      "  ",
    ),
    "",
  );
  return out;
}

/**
 * Where pulumi up reaches the cluster's API, and what `pulumi destroy` leaves behind or blocks on.
 *
 * @param columns - the most columns a line takes. @default {@link COLUMNS}
 */
export function deployLines(plan: Pick<StackPlan, "apiEndpoint" | "destroy">, columns = COLUMNS): string[] {
  const wrap = wrapAt(columns);
  return [
    ...(plan.apiEndpoint ? [...wrap(`API endpoint: ${plan.apiEndpoint}`), ""] : []),
    "What pulumi destroy leaves or blocks on:",
    ...(plan.destroy.length === 0 ? ["  nothing"] : []),
    ...plan.destroy.flatMap((d) => [...wrap(`${d.what}: ${d.why}`, "  "), ...wrap(`check: ${d.check}`, "    ")]),
    "",
  ];
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => `  ${r.map((c, i) => c.padEnd(widths[i]!)).join("  ")}`.trimEnd());
}

/** The line on a workload's GPU memory: the verdict, the requirement, and the breakdown of its peak. */
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

/** What a pool with fallback instance types plans its jobs on, and which type binds each figure. */
function fallbackNote(p: GpuPoolPlan): string {
  const n = p.node;
  const b = n.binding;
  return (
    `${p.name}: nodes are ${p.instanceTypes.join(", then ")} (the next size when EC2 has none of the one before); ` +
    `jobs are planned on the least of them: Ray pod ${p.podBudget.cpus} CPU, ${p.podBudget.memoryGiB} GiB ` +
    `(${b.podBudget}), GPU memory ${n.usableGpuMemoryGiB} GiB (${b.usableGpuMemoryGiB}), NVMe ${n.nvmeGB} GB ` +
    `(${b.nvmeGB}), ${n.denseBf16Tflops} BF16 TFLOPS (${b.denseBf16Tflops}); the price at max is the dearest size's`
  );
}

/** The pools table: allocatable per node, what one Ray pod may request, and the price at max. */
function poolLines(plan: StackPlan, wrap: Wrap): string[] {
  const rows = [["NAME", "ROLE", "INSTANCE", "NODES", "CAPACITY", "ALLOCATABLE/NODE", "RAY POD/NODE", "$/H MAX"]];
  for (const p of [plan.pools.cpu, ...plan.pools.gpu]) {
    const gpus = p.allocatable.gpus ? `, ${p.allocatable.gpus} GPU` : "";
    rows.push([
      p.name,
      p.role,
      p.role === "gpu" ? p.instanceTypes.join(" > ") : p.instanceType,
      `${p.minNodes}-${p.maxNodes}`,
      p.capacityType,
      `${p.allocatable.cpuMillis}m CPU, ${(p.allocatable.memoryMiB / 1024).toFixed(1)} GiB${gpus}`,
      `${p.podBudget.cpus} CPU, ${p.podBudget.memoryGiB} GiB${gpus}`,
      p.usdPerHourAtMax.toFixed(2),
    ]);
  }
  // A spot-with-fallback pool's price depends on where its nodes come from: say what it is at most.
  const fallback = plan.pools.gpu.filter((p) => p.capacityType === "spot-with-fallback");
  return [
    ...wrap(
      "Node pools (allocatable per node after kube-reserved and eviction; Ray pod = what one Ray pod may request after " +
        "DaemonSets)",
      "",
      HEADING_HANG,
    ),
    ...table(rows),
    ...wrap("(prices: approximate us-east-1 on-demand list prices; spot is cheaper and varies)", "  "),
    ...fallback.flatMap((p) => wrap(`${p.name}: ${capacityCostNote(p)}`, "  ")),
    ...plan.pools.gpu.filter((p) => p.instanceTypes.length > 1).flatMap((p) => wrap(fallbackNote(p), "  ")),
    "",
  ];
}

/** Where a job on a pool with fallback sizes is planned: the least GPU memory, or (dev) the pool's own size. */
const fallbackMemoryNote = (f: FallbackFit) =>
  f.misfits.length > 0
    ? ` on ${f.gpuMemoryBindsOn}, the pool's own size`
    : ` on ${f.gpuMemoryBindsOn}, the least of the pool's sizes`;

/** One workload's block: pool and GPUs, memory verdict, knobs, advice, head and worker, alerts, and every reason. */
function workloadLines(w: WorkloadPlan, alerted: boolean, wrap: Wrap, startup?: WorkloadStartup): string[] {
  const s = w.shape;
  const example = w.example ? " [example: rendered, not submitted by pulumi up]" : "";
  const knobs = Object.entries(w.memory.knobs).map(([k, v]) => `${k}=${String(v)}`);
  const out = [
    `Workload ${w.name} (${w.kind}, ${w.modelName}): ${w.gpus} GPUs on pool ${w.nodePool} = ${s.worker.replicas} ` +
      `x ${w.fallback ? w.fallback.instanceTypes.join(" or ") : w.instanceType}${example}`,
    memoryLine(w.memory.memory) + (w.fallback ? fallbackMemoryNote(w.fallback) : ""),
    ...(w.fallback?.misfits ?? []).map(
      (t) =>
        `  ! does not fit in GPU memory on ${t}, a fallback of pool ${w.nodePool}: the job runs out of memory if ` +
        `the autoscaler starts a ${t} node for it (prod refuses this)`,
    ),
    `  knobs: ${knobs.join(", ")}`,
    ...w.memory.advice.map((a) => `  ! ${a}`),
    `  head: ${s.head.cpus} CPU, ${s.head.memoryGiB} GiB, object store ${s.head.objectStoreGiB} GiB, num-cpus 0`,
    `  worker: ${s.worker.replicas} x (${s.worker.gpusPerWorker} GPU, ${s.worker.cpus} CPU, ${s.worker.memoryGiB} ` +
      `GiB; object store ${s.worker.objectStoreGiB} GiB in /dev/shm ${s.worker.shmGiB} GiB; spill ${s.worker.spillGiB} ` +
      `GiB on NVMe)`,
  ];
  if (alerted)
    out.push(
      `  alerts: GPU utilization below ${w.gpuUtilizationTargetPercent}% for 15 min, any spilling, pods pending ` +
        `for 75% of the ${s.lifecycle.preRunningDeadlineSeconds / 60} min pre-running deadline`,
    );
  // Variables that send pip, the model hub, S3 or every request elsewhere (HTTPS only: core/config/env-rules.ts), and
  // what pip installs at start (hash-checked or not: core/config/pip.ts).
  out.push(...startupLines(startup));
  out.push(...forecastLines(w.forecast));
  if (w.tuning.engine === "ray-train")
    out.push(`  interruptions: ${lostWorkText(w.tuning.interruptions, s.worker.spot)}`);
  out.push("  why:", ...allDecisions(w).map((d) => `    ${d.key} = ${String(d.value)}: ${d.reason}`), "");
  return fit(out, wrap);
}

/**
 * The text of `ray-gpu plan`: the stack, its pools, the queue, each workload, and what is not rendered, every line
 * but a table row wrapped to `columns`.
 *
 * @param columns - the most columns a line takes. @default {@link COLUMNS}
 * @param startup - by workload name, what it fetches when it starts ({@link workloadStartup}).
 *   @default {} (no redirects or pip lines)
 */
export function planText(
  stack: string | undefined,
  plan: StackPlan,
  columns = COLUMNS,
  startup: Readonly<Record<string, WorkloadStartup>> = {},
): string {
  const wrap = wrapAt(columns);
  // Jobs rendered with their PrometheusRule (the stack has observability).
  const alerted = new Set(
    plan.objects.filter((o) => o.objects.some((k) => k.kind === "PrometheusRule")).map((o) => o.workload),
  );
  return [
    ...wrap(
      `Stack ${stack ?? "(workload file)"}: environment ${plan.environment}, region ${plan.region}, namespace ` +
        plan.namespace,
    ),
    "",
    ...poolLines(plan, wrap),
    ...queueLines(plan.queue, wrap),
    ...deployLines(plan, columns),
    ...(plan.workloads.length === 0 ? wrap("Workloads: none (add entries under ray-gpu:workloads)") : []),
    ...plan.workloads.flatMap((w) => workloadLines(w, alerted.has(w.name), wrap, startup[w.name])),
    ...plan.notRendered.flatMap((n) => wrap(`Not rendered: ${n.workload}: ${n.reason}`)),
  ].join("\n");
}

/** What a workload fetches when it starts: the variables that redirect downloads, and what pip installs. */
export interface WorkloadStartup {
  /** Its `env` and `runtimeEnv.envVars` variables that send downloads elsewhere (`NAME → URL`). */
  readonly redirects: readonly string[];
  /** How many `runtimeEnv.pip` requirements pip installs at each start, and whether by hash. */
  readonly pip: { readonly count: number; readonly verification: PipVerification };
}

/** By workload name, what it fetches when it starts ({@link WorkloadStartup}). */
export function workloadStartup(
  workloads: readonly Pick<WorkloadSpec, "name" | "env" | "runtimeEnv">[],
): Record<string, WorkloadStartup> {
  return Object.fromEntries(
    workloads.map((w) => [
      w.name,
      {
        redirects: envRedirects(w.env, w.runtimeEnv?.envVars),
        pip: { count: w.runtimeEnv?.pip?.length ?? 0, verification: pipVerification(w.runtimeEnv?.pip) },
      },
    ]),
  );
}

/** The startup lines of a workload's block: redirects, and pip's installs with how they are verified. */
function startupLines(startup: WorkloadStartup | undefined): string[] {
  if (!startup) return [];
  const { redirects, pip } = startup;
  const packages = `${pip.count} package${pip.count === 1 ? "" : "s"}`;
  const installs: Record<Exclude<PipVerification, "none">, string> = {
    "hash-checked": `  pip at start: ${packages}, each checked against its --hash (--require-hashes)`,
    unverified: `  pip at start: ${packages}, not hash-checked (a prod job's need --hash)`,
  };
  return [
    ...(redirects.length > 0 ? [`  redirects: ${redirects.join(", ")}`] : []),
    ...(pip.verification === "none" ? [] : [installs[pip.verification]]),
  ];
}
