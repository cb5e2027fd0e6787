/**
 * The deploy simulation's scheduler applied to a stack: the platform's own pods must fit the pools at min size (the
 * nodes that exist while `pulumi up` waits for the add-ons), each job's pods must fit the pools at max size beside
 * them, and the jobs Kueue admits at once (their requests fit the quota) must fit together. Each problem names the
 * pod, why no node takes it, and the fix. Pure; `ray-gpu plan` and `preview` run it through `planStack`.
 */
import type { ConfigIssue } from "../core/errors";
import { layoutNodes } from "../core/deploy/layout";
import type { PodRequest } from "../core/deploy/platform-pods";
import { indexNodes, type NodeIndex } from "../core/deploy/schedule";
import type { AdmissionPlan } from "../core/platform/queueing";
import { SUBMITTER_REQUEST } from "../core/platform/queueing";
import type { PlatformPlan } from "../core/platform-plan";
import type { WorkloadPlan } from "./workload";

/** The pods one job runs: its head and submitter on the CPU pool, its workers on their GPU pool. */
export function jobPods(plan: WorkloadPlan): PodRequest[] {
  const { head, worker } = plan.shape;
  const onHead = { gpus: 0, nodeSelector: head.nodeSelector, tolerates: [] };
  return [
    { name: `${plan.name}/head`, cpuMillis: head.cpus * 1000, memoryMiB: head.memoryGiB * 1024, ...onHead },
    { name: `${plan.name}/submitter`, ...SUBMITTER_REQUEST, ...onHead },
    ...Array.from({ length: worker.replicas }, (_, i) => ({
      name: `${plan.name}/worker-${i + 1}`,
      cpuMillis: worker.cpus * 1000,
      memoryMiB: worker.memoryGiB * 1024,
      gpus: worker.gpusPerWorker,
      nodeSelector: worker.nodeSelector,
      tolerates: worker.tolerations.map((t) => t.key),
    })),
  ];
}

const CPU_POOL_FIX =
  "choose a larger platform.cpuNodeGroup.instanceType, or raise its minNodes so the platform's pods spread over more nodes";

/** What a GPU node misses without each DaemonSet. */
const WITHOUT_DAEMONSET: Readonly<Record<string, string>> = {
  "nvidia-device-plugin": "the node never offers nvidia.com/gpu, so no worker is ever scheduled there",
  "dcgm-exporter": "the node's GPUs report no metrics, so the utilization alerts and dashboards stay empty",
};

/** Platform pods that no node of the pools at min size can take, and GPU DaemonSets a GPU pool would not run. */
function platformIssues(platform: PlatformPlan): ConfigIssue[] {
  const unplaced = platform.layout.unplaced.map((u) => ({
    path: "ray-gpu:platform.cpuNodeGroup",
    message: u.pod.notAwaited
      ? `platform pod ${u.pod.name} cannot be scheduled on the pools at minNodes beside the platform's other pods: ` +
        `${u.why}; ${u.pod.notAwaited}; ${CPU_POOL_FIX}`
      : `platform pod ${u.pod.name} cannot be scheduled while pulumi up waits for it (the pools at minNodes, beside ` +
        `the platform's other pods): ${u.why}, so the deploy fails; ${CPU_POOL_FIX}`,
  }));
  const missing = platform.layout.missingDaemonSets.map((m) => ({
    path: `ray-gpu:platform.gpuNodeGroups[${platform.pools.gpu.findIndex((p) => p.name === m.pool)}]`,
    message:
      `DaemonSet ${m.daemonSet} would not run on the nodes of GPU pool ${m.pool} (its node selector, affinity or ` +
      `tolerations exclude them, e.g. the GPU taint): ${WITHOUT_DAEMONSET[m.daemonSet] ?? "it is missing there"}`,
  }));
  return [...unplaced, ...missing];
}

/** Jobs with a pod that no node takes even with the pools at max size (`nodes`) and no other job running. */
function aloneIssues(nodes: NodeIndex, jobs: readonly { plan: WorkloadPlan; path: string }[]): ConfigIssue[] {
  return jobs.flatMap(({ plan, path }) =>
    nodes.trial(jobPods(plan), "firstFit").map((u) => ({
      path,
      message:
        `pod ${u.pod.name} can never be scheduled, even with every pool at maxNodes and no other job: ${u.why} ` +
        `(after the platform's own pods); ${CPU_POOL_FIX}, or give the job fewer GPUs (its head grows with its workers)`,
    })),
  );
}

/** The jobs Kueue admits at once: their pods placed together on the pools at max size (`nodes`). */
function togetherIssues(
  nodes: NodeIndex,
  jobs: readonly { plan: WorkloadPlan; path: string }[],
  admission: AdmissionPlan,
): ConfigIssue[] {
  const admitted = jobs.filter((j) => admission.admitted.includes(j.plan.name));
  const left = nodes.trial(
    admitted.flatMap((j) => jobPods(j.plan)),
    "firstFit",
  );
  return left.map((u) => ({
    path: admitted.find((j) => u.pod.name.startsWith(`${j.plan.name}/`))!.path,
    message:
      `Kueue admits ${admitted.map((j) => j.plan.name).join(", ")} at once (their requests fit the queue's quota), ` +
      `but pod ${u.pod.name} then cannot be scheduled: ${u.why}; ${CPU_POOL_FIX}`,
  }));
}

/**
 * Every scheduling problem of a planned stack: platform pods at deploy, job pods that never fit, and jobs admitted
 * together that do not fit together. A job already refused alone is not reported again for the admitted set. The
 * pools at max size are indexed once; each job, and the admitted set, is a trial placement on them that is undone.
 */
export function schedulingIssues(
  platform: PlatformPlan,
  jobs: readonly { plan: WorkloadPlan; path: string }[],
  admission: AdmissionPlan | undefined,
): ConfigIssue[] {
  const nodes = indexNodes(layoutNodes(platform.layout));
  const alone = aloneIssues(nodes, jobs);
  const refused = new Set(alone.map((i) => i.path));
  const fitting = jobs.filter((j) => !refused.has(j.path));
  return [...platformIssues(platform), ...alone, ...(admission ? togetherIssues(nodes, fitting, admission) : [])];
}
