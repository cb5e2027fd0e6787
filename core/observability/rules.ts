/**
 * Prometheus rules with thresholds taken from each job's plan. Two kinds of groups:
 * - the stack's: recording rules that attribute DCGM's GPU series (utilization, memory, power, SM clock) to a job
 *   (through kube-state-metrics' pod labels), and the alerts every job shares: GPU memory above 97% of the device, a
 *   container OOM-killed, a GPU node idle with no job pod for longer than the autoscaler's scale-down time;
 * - each job's: GPU utilization below its target for 15 minutes, any bytes spilled (the plan sizes every job so that
 *   nothing spills), pods pending for three quarters of the job's pre-running deadline (KubeRay fails the job at
 *   the deadline; the alert comes while there is time to act), and the job hung, starved or idle (./job-states).
 * Metric names come from ./metrics. Pure.
 */
import type { WorkloadKind } from "../config/workloads";
import { jobStateAlerts, LOW_UTILIZATION_FOR } from "./job-states";
import { ksmLabel, METRICS, RECORDED } from "./metrics";
import { byWorkload, promDuration, sel, type AlertRule, type RecordingRule, type RuleGroup } from "./promql";

export { LOW_UTILIZATION_FOR } from "./job-states";
export { durationSeconds, promDuration, type AlertRule, type RecordingRule, type RuleGroup } from "./promql";

/** The default utilization target per kind: training keeps GPUs busier than batch inference can. */
export const DEFAULT_GPU_UTILIZATION_TARGET: { readonly [K in WorkloadKind]: number } = {
  TrainingJob: 90,
  LoRAFineTune: 90,
  EmbeddingPipeline: 85,
  BatchInference: 85,
};

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
  /**
   * The planned seconds of one training step, from which the hung and idle alerts' stall window follows
   * (`STALL_STEPS` steps, at least `STALL_ALERT_FLOOR_SECONDS`).
   * @default - no step counter (Ray Data kinds): no hung or idle alert, the starved alert only
   */
  readonly plannedStepSeconds?: number | undefined;
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
    { record: RECORDED.gpuPowerUsage, expr: byWorkload(dcgm(METRICS.gpuPowerUsage.name), { namespace: ns }) },
    { record: RECORDED.gpuSmClock, expr: byWorkload(dcgm(METRICS.gpuSmClock.name), { namespace: ns }) },
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

/** Labels of every alert of one job. */
const jobLabels = (j: JobAlertInput) => ({ severity: "warning", workload: j.workload });
const jobMatch = (j: JobAlertInput) => ({ namespace: j.namespace, workload: j.workload });

/** The job's GPUs average below its utilization target for 15 minutes. */
function lowUtilizationAlert(j: JobAlertInput, target: number): AlertRule {
  return {
    alert: "RayGpuJobLowUtilization",
    expr: `avg by (namespace, workload) (${RECORDED.gpuUtilization}${sel(jobMatch(j))}) < ${target}`,
    for: LOW_UTILIZATION_FOR,
    labels: jobLabels(j),
    annotations: {
      summary: `${j.workload}: average GPU utilization below its ${target}% target for 15 minutes`,
      description:
        `The job's GPUs averaged {{ $value | printf "%.1f" }}% (DCGM_FI_DEV_GPU_UTIL) against a target of ` +
        `${target}% (gpuUtilizationTargetPercent). Look at the data-wait fraction and the object store on ` +
        "the job's dashboard: a starved input pipeline is the usual cause.",
    },
  };
}

/** Any bytes spilled, which the plan rules out. */
function spillingAlert(j: JobAlertInput): AlertRule {
  return {
    alert: "RayGpuJobSpilling",
    expr: `max by (namespace, workload) (${METRICS.objectStoreMemory.name}${sel({ ...jobMatch(j), Location: "SPILLED" })}) > 0`,
    for: "1m",
    labels: jobLabels(j),
    annotations: {
      summary: `${j.workload}: the object store is spilling to disk, which its plan says it should not`,
      description: `{{ $value | humanize1024 }}B spilled. The plan: ${j.noSpillBecause}.`,
    },
  };
}

/** A pod of the job Pending for three quarters of its pre-running deadline. */
function pendingAlert(j: JobAlertInput): AlertRule {
  const pendingFor = j.preRunningDeadlineSeconds * PENDING_SHARE_OF_DEADLINE;
  const pending = `${METRICS.podPhase.name}${sel({ namespace: j.namespace, phase: "Pending" })}`;
  return {
    alert: "RayGpuJobPendingTooLong",
    expr: `max by (namespace, workload) (${byWorkload(pending, jobMatch(j))}) > 0`,
    for: promDuration(pendingFor),
    labels: jobLabels(j),
    annotations: {
      summary:
        `${j.workload}: pods pending for ${promDuration(pendingFor)} ` +
        `of a ${promDuration(j.preRunningDeadlineSeconds)} pre-running deadline`,
      description:
        `KubeRay fails the job when it is not running ${promDuration(j.preRunningDeadlineSeconds)} after ` +
        "admission. Pending pods usually wait for a GPU node (capacity, quota, the autoscaler) or an image pull.",
    },
  };
}

/**
 * One job's group: utilization below target, spilling, pods pending toward the pre-running deadline, and the job
 * hung, starved or idle.
 */
export function jobRuleGroup(j: JobAlertInput): RuleGroup {
  const target = j.gpuUtilizationTargetPercent ?? DEFAULT_GPU_UTILIZATION_TARGET[j.kind];
  const states = jobStateAlerts({
    workload: j.workload,
    namespace: j.namespace,
    kind: j.kind,
    gpuUtilizationTargetPercent: target,
    plannedStepSeconds: j.plannedStepSeconds,
    labels: jobLabels(j),
  });
  return {
    name: `ray-gpu.${j.namespace}.job.${j.workload}`,
    rules: [lowUtilizationAlert(j, target), spillingAlert(j), pendingAlert(j), ...states],
  };
}
