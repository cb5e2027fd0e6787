/**
 * Prometheus rules with thresholds taken from each job's plan. Two kinds of groups:
 * - the stack's: recording rules that attribute DCGM's GPU series to a job (through kube-state-metrics' pod labels),
 *   and the alerts every job shares: GPU memory above 97% of the device, a container OOM-killed, a GPU node idle with
 *   no job pod for longer than the autoscaler's scale-down time;
 * - each job's: GPU utilization below its target for 15 minutes, any bytes spilled (the plan sizes every job so that
 *   nothing spills), and pods pending for three quarters of the job's pre-running deadline (KubeRay fails the job at
 *   the deadline; the alert comes while there is time to act).
 * Metric names come from ./metrics. Pure.
 */
import type { WorkloadKind } from "../config/workloads";
import { ksmLabel, METRICS, RECORDED } from "./metrics";

/** A recording rule. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}

/** An alerting rule, as Prometheus (and the PrometheusRule CRD) takes it. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** How long the condition must hold, a Prometheus duration ("15m"). */
  readonly for: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: { readonly summary: string; readonly description: string };
}

/** One rule group. */
export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly (RecordingRule | AlertRule)[];
}

/** The default utilization target per kind: training keeps GPUs busier than batch inference can. */
export const DEFAULT_GPU_UTILIZATION_TARGET: { readonly [K in WorkloadKind]: number } = {
  TrainingJob: 90,
  LoRAFineTune: 90,
  EmbeddingPipeline: 85,
  BatchInference: 85,
};

/** How long utilization may stay below target before the alert fires. */
export const LOW_UTILIZATION_FOR = "15m";
/** Used share of a GPU's framebuffer above which an OOM is near. */
export const GPU_MEMORY_NEAR_FULL = 0.97;
/** Share of the pre-running deadline a job's pods may stay Pending before the alert fires. */
export const PENDING_SHARE_OF_DEADLINE = 0.75;
/** Added to the autoscaler's scale-down time before an idle GPU node is reported (its loop and drain). */
export const IDLE_NODE_GRACE_SECONDS = 5 * 60;

/** What a job's alerts need from its plan. */
export interface JobAlertInput {
  readonly workload: string;
  readonly namespace: string;
  readonly kind: WorkloadKind;
  /** @default - {@link DEFAULT_GPU_UTILIZATION_TARGET} of the kind */
  readonly gpuUtilizationTargetPercent?: number | undefined;
  readonly preRunningDeadlineSeconds: number;
  /** The plan's reason that nothing spills (its working set against its object-store limit). */
  readonly noSpillBecause: string;
}

/** What the stack's group needs: the namespace, the autoscaler's scale-down time and the pools it empties. */
export interface StackAlertInput {
  readonly namespace: string;
  readonly scaleDownUnneededSeconds: number;
  /**
   * GPU pools with `minNodes` 0: the only ones whose idle nodes the autoscaler removes (a pool's minimum stays).
   * No idle-node alert when empty.
   */
  readonly scaleToZeroPools: readonly string[];
}

/** Seconds as a Prometheus duration: 2700 → "45m", 5400 → "1h30m", 90 → "1m30s". */
export function promDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const parts: [number, string][] = [
    [Math.floor(s / 3600), "h"],
    [Math.floor((s % 3600) / 60), "m"],
    [s % 60, "s"],
  ];
  const text = parts
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n}${u}`)
    .join("");
  return text || "0s";
}

/** A Prometheus-style duration ("10m", "1h30m", "45s") in seconds. */
export function durationSeconds(text: string): number {
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1 };
  const parts = [...text.matchAll(/(\d+)([hms])/g)];
  if (parts.map((p) => p[0]).join("") !== text || parts.length === 0) throw new Error(`not a duration: ${text}`);
  return parts.reduce((n, p) => n + Number(p[1]) * unit[p[2]!]!, 0);
}

/** A label matcher list: `{a="x", b!=""}`. */
const sel = (m: Readonly<Record<string, string>>) =>
  `{${Object.entries(m)
    .map(([k, v]) => (v.startsWith("!=") ? `${k}!="${v.slice(2)}"` : `${k}="${v}"`))
    .join(", ")}}`;

/**
 * `expr`, with the workload label joined from its pod (`* on (namespace, pod) group_left (workload) …`); `match`
 * selects the pods (the namespace, and a workload for one job's rules).
 */
const byWorkload = (expr: string, match: Readonly<Record<string, string>>) =>
  `${expr} * on (namespace, pod) group_left (workload) ${RECORDED.podWorkload}${sel(match)}`;

function recordingRules(ns: string): RecordingRule[] {
  const workloadLabel = ksmLabel("ray-gpu.io/workload");
  const dcgm = (m: string) => `${m}${sel({ namespace: ns })}`;
  const used = dcgm(METRICS.gpuMemoryUsed.name);
  return [
    {
      record: RECORDED.podWorkload,
      expr:
        `max by (namespace, pod, workload) (label_replace(${METRICS.podLabels.name}` +
        `${sel({ namespace: ns, [workloadLabel]: "!=" })}, "workload", "$1", "${workloadLabel}", "(.+)"))`,
    },
    { record: RECORDED.gpuUtilization, expr: byWorkload(dcgm(METRICS.gpuUtilization.name), { namespace: ns }) },
    { record: RECORDED.gpuMemoryUsedMiB, expr: byWorkload(used, { namespace: ns }) },
    {
      record: RECORDED.gpuMemoryUsed,
      expr: byWorkload(`(${used} / (${used} + ${dcgm(METRICS.gpuMemoryFree.name)}))`, { namespace: ns }),
    },
  ];
}

function stackAlerts(a: StackAlertInput): AlertRule[] {
  const ns = a.namespace;
  const jobPodsOnNodes = `max by (node) (${byWorkload(`${METRICS.podInfo.name}${sel({ namespace: ns })}`, { namespace: ns })})`;
  const oomKilled =
    `(increase(${METRICS.containerRestarts.name}${sel({ namespace: ns })}[10m]) > 0) and on (namespace, pod, ` +
    `container) (${METRICS.lastTerminatedReason.name}${sel({ namespace: ns, reason: "OOMKilled" })} == 1)`;
  return [
    {
      alert: "RayGpuMemoryNearFull",
      expr: `${RECORDED.gpuMemoryUsed}${sel({ namespace: ns })} > ${GPU_MEMORY_NEAR_FULL}`,
      for: "5m",
      labels: { severity: "warning" },
      annotations: {
        summary: "{{ $labels.workload }}: GPU {{ $labels.gpu }} of {{ $labels.pod }} is above 97% of its memory",
        description:
          `Used framebuffer is {{ $value | humanizePercentage }} of the device for 5 minutes: a CUDA out-of-memory ` +
          `error is near. The plan keeps headroom on every GPU; a job that grows past it (longer sequences, a ` +
          `bigger batch than planned) should be re-planned with \`ray-gpu plan\`.`,
      },
    },
    {
      alert: "RayGpuContainerOOMKilled",
      // One alert per container, whatever kube-state-metrics replicas report it.
      expr: `max by (namespace, pod, container, workload) (${byWorkload(`(${oomKilled})`, { namespace: ns })})`,
      for: "0m",
      labels: { severity: "warning" },
      annotations: {
        summary: "{{ $labels.workload }}: container {{ $labels.container }} of {{ $labels.pod }} was OOM-killed",
        description:
          "The container exceeded its memory limit and restarted in the last 10 minutes. Ray pods are sized to fill " +
          "their node; host memory use beyond the plan (a large driver, CPU offload, dataloader workers) is the usual cause.",
      },
    },
    ...(a.scaleToZeroPools.length ? [idleNodeAlert(a, jobPodsOnNodes)] : []),
  ];
}

/** A GPU node of a pool that scales to zero with no job pod for longer than the autoscaler's scale-down time. */
function idleNodeAlert(a: StackAlertInput, jobPodsOnNodes: string): AlertRule {
  const idleFor = a.scaleDownUnneededSeconds + IDLE_NODE_GRACE_SECONDS;
  const nodes = sel({ [ksmLabel("ray-gpu.io/role")]: "gpu" }).replace(
    /\}$/,
    `, ${ksmLabel("ray-gpu.io/pool")}=~"${a.scaleToZeroPools.join("|")}"}`,
  );
  return {
    alert: "RayGpuNodeIdle",
    expr: `max by (node) (${METRICS.nodeLabels.name}${nodes}) unless on (node) ${jobPodsOnNodes}`,
    for: promDuration(idleFor),
    labels: { severity: "warning" },
    annotations: {
      summary: "GPU node {{ $labels.node }} has run no job pod for longer than the autoscaler allows",
      description:
        `No pod of a ray-gpu job has been on this node for ${promDuration(idleFor)}: the Cluster Autoscaler's ` +
        `scale-down time (${promDuration(a.scaleDownUnneededSeconds)}) plus ${promDuration(IDLE_NODE_GRACE_SECONDS)}. ` +
        "It is paid for and idle: check the autoscaler's log for why it keeps the node (a pod without " +
        "safe-to-evict, another team's pod).",
    },
  };
}

/** The stack's group: recording rules and the alerts every job shares. */
export function stackRuleGroup(a: StackAlertInput): RuleGroup {
  return { name: `ray-gpu.${a.namespace}.stack`, rules: [...recordingRules(a.namespace), ...stackAlerts(a)] };
}

/** One job's group: utilization below target, spilling, and pods pending toward the pre-running deadline. */
export function jobRuleGroup(j: JobAlertInput): RuleGroup {
  const target = j.gpuUtilizationTargetPercent ?? DEFAULT_GPU_UTILIZATION_TARGET[j.kind];
  const job = { namespace: j.namespace, workload: j.workload };
  const labels = { severity: "warning", workload: j.workload };
  const pendingFor = j.preRunningDeadlineSeconds * PENDING_SHARE_OF_DEADLINE;
  const pending = `${METRICS.podPhase.name}${sel({ namespace: j.namespace, phase: "Pending" })}`;
  return {
    name: `ray-gpu.${j.namespace}.job.${j.workload}`,
    rules: [
      {
        alert: "RayGpuJobLowUtilization",
        expr: `avg by (namespace, workload) (${RECORDED.gpuUtilization}${sel(job)}) < ${target}`,
        for: LOW_UTILIZATION_FOR,
        labels,
        annotations: {
          summary: `${j.workload}: average GPU utilization below its ${target}% target for 15 minutes`,
          description:
            `The job's GPUs averaged {{ $value | printf "%.1f" }}% (DCGM_FI_DEV_GPU_UTIL) against a target of ` +
            `${target}% (gpuUtilizationTargetPercent). Look at the data-wait fraction and the object store on ` +
            "the job's dashboard: a starved input pipeline is the usual cause.",
        },
      },
      {
        alert: "RayGpuJobSpilling",
        expr: `max by (namespace, workload) (${METRICS.objectStoreMemory.name}${sel({ ...job, Location: "SPILLED" })}) > 0`,
        for: "1m",
        labels,
        annotations: {
          summary: `${j.workload}: the object store is spilling to disk, which its plan says it should not`,
          description: `{{ $value | humanize1024 }}B spilled. The plan: ${j.noSpillBecause}.`,
        },
      },
      {
        alert: "RayGpuJobPendingTooLong",
        expr: `max by (namespace, workload) (${byWorkload(pending, job)}) > 0`,
        for: promDuration(pendingFor),
        labels,
        annotations: {
          summary: `${j.workload}: pods pending for ${promDuration(pendingFor)} of a ${promDuration(j.preRunningDeadlineSeconds)} pre-running deadline`,
          description:
            `KubeRay fails the job when it is not running ${promDuration(j.preRunningDeadlineSeconds)} after ` +
            "admission. Pending pods usually wait for a GPU node (capacity, quota, the autoscaler) or an image pull.",
        },
      },
    ],
  };
}
