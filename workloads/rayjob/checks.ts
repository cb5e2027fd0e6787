/**
 * Checks at plan time what KubeRay (v1.7.0) and the scheduler would only report after apply: GPU on the head, workers
 * larger than their node, missing tolerations, lifecycle rules KubeRay rejects, replica bounds, and an object store
 * larger than /dev/shm. Mirrors `ray-operator/controllers/ray/utils/validation.go`, one named check per concern.
 */
import { QUEUE_NAME_LABEL } from "../../core/platform/queueing";
import { SHM_PATH } from "../../core/cluster/shape";
import { MAX_RAYJOB_NAME_LENGTH } from "../../core/config/workloads";
import type { ConfigIssue } from "../../core/errors";
import { POOL_LABEL, type GpuPoolPlan, type PoolsPlan } from "../../core/pools";
import { GIB, parseQuantity } from "../../core/quantity";
import type { DeletionRuleSpec, PodSpec, RayJob, RayStartParams, WorkerGroupSpec } from "../k8s/types";

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** Per job status, TTLs must not decrease in this order. */
const POLICY_ORDER = ["DeleteWorkers", "DeleteCluster", "DeleteSelf"] as const;

/** Records a problem at a path inside the RayJob. */
type Report = (path: string, message: string, value?: unknown) => void;

/** All problems of `job` against the stack's pools; empty when KubeRay and the scheduler would accept it. */
export function checkRayJob(job: RayJob, pools: PoolsPlan): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const base = `RayJob ${job.metadata.name}`;
  const report: Report = (path, message, value) =>
    issues.push(
      value === undefined ? { path: `${base}: ${path}`, message } : { path: `${base}: ${path}`, message, value },
    );
  checkName(job, report);
  checkLifecycle(job, report);
  checkQueued(job, report);
  checkDeletionRules(job.spec.deletionStrategy?.deletionRules ?? [], report);
  checkHead(job, report);
  job.spec.rayClusterSpec.workerGroupSpecs.forEach((group, i) =>
    checkWorkerGroup(group, `spec.rayClusterSpec.workerGroupSpecs[${i}]`, pools, report),
  );
  return issues;
}

function checkName(job: RayJob, report: Report): void {
  const name = job.metadata.name;
  if (name.length > MAX_RAYJOB_NAME_LENGTH)
    report("metadata.name", `RayJob name should be no more than ${MAX_RAYJOB_NAME_LENGTH} characters`, name);
  if (!DNS1035.test(name)) report("metadata.name", "RayJob name should be a valid DNS1035 label", name);
}

/**
 * Kueue's rules for a RayJob it manages (kueue pkg/controller/jobs/rayjob/rayjob_webhook.go), and KubeRay's for a
 * suspended one (utils/validation.go): shut down after the job, no in-tree autoscaling, no worker group named "head".
 */
function checkQueued(job: RayJob, report: Report): void {
  const { spec } = job;
  const queued = job.metadata.labels?.[QUEUE_NAME_LABEL] !== undefined;
  if ((queued || spec.suspend) && spec.shutdownAfterJobFinishes !== true)
    report(
      "spec.shutdownAfterJobFinishes",
      queued
        ? "a kueue managed job should delete the cluster after finishing"
        : "a RayJob with shutdownAfterJobFinishes set to false is not allowed to be suspended",
      spec.shutdownAfterJobFinishes,
    );
  if (!queued) return;
  if (spec.rayClusterSpec.enableInTreeAutoscaling)
    report("spec.rayClusterSpec.enableInTreeAutoscaling", "Kueue refuses in-tree autoscaling for a queued job", true);
  spec.rayClusterSpec.workerGroupSpecs.forEach((g, i) => {
    if (g.groupName === "head")
      report(`spec.rayClusterSpec.workerGroupSpecs[${i}].groupName`, 'Kueue reserves the name "head"', g.groupName);
  });
}

/** Deadlines, retries, and how shutdown, TTL and deletion rules combine. */
function checkLifecycle(job: RayJob, report: Report): void {
  const { spec } = job;
  if (!(spec.activeDeadlineSeconds > 0))
    report(
      "spec.activeDeadlineSeconds",
      "activeDeadlineSeconds must be a positive integer",
      spec.activeDeadlineSeconds,
    );
  if (!(spec.preRunningDeadlineSeconds > 0))
    report(
      "spec.preRunningDeadlineSeconds",
      "preRunningDeadlineSeconds must be a positive integer",
      spec.preRunningDeadlineSeconds,
    );
  if (spec.backoffLimit < 0)
    report("spec.backoffLimit", "backoffLimit must be a non-negative integer", spec.backoffLimit);
  const ttl = spec.ttlSecondsAfterFinished ?? 0;
  if (ttl > 0 && spec.shutdownAfterJobFinishes !== true) {
    report(
      "spec.ttlSecondsAfterFinished",
      "a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished",
      spec.ttlSecondsAfterFinished,
    );
  }
  if (!spec.deletionStrategy?.deletionRules) return;
  if (spec.shutdownAfterJobFinishes)
    report(
      "spec.deletionStrategy.deletionRules",
      "spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are mutually exclusive",
    );
  if (ttl > 0)
    report(
      "spec.ttlSecondsAfterFinished",
      "a global TTL cannot be combined with deletionRules; put ttlSeconds on each rule",
      spec.ttlSecondsAfterFinished,
    );
}

/** The status a rule applies to, as KubeRay's messages name it. */
const statusOf = (r: DeletionRuleSpec) =>
  r.condition.jobStatus
    ? `JobStatus '${r.condition.jobStatus}'`
    : `JobDeploymentStatus '${r.condition.jobDeploymentStatus}'`;

/** One condition per rule, no duplicate rule per status and policy, and TTLs that never decrease along POLICY_ORDER. */
function checkDeletionRules(rules: readonly DeletionRuleSpec[], report: Report): void {
  const ttls = new Map<string, Map<string, number>>();
  rules.forEach((r, i) => {
    const { jobStatus, jobDeploymentStatus, ttlSeconds = 0 } = r.condition;
    if ((jobStatus === undefined) === (jobDeploymentStatus === undefined))
      report(
        `spec.deletionStrategy.deletionRules[${i}].condition`,
        "exactly one of jobStatus and jobDeploymentStatus must be set",
      );
    const byPolicy = ttls.get(statusOf(r)) ?? new Map<string, number>();
    if (byPolicy.has(r.policy))
      report(
        `spec.deletionStrategy.deletionRules[${i}]`,
        `duplicate rule for DeletionPolicyType '${r.policy}' and ${statusOf(r)}`,
      );
    ttls.set(statusOf(r), byPolicy.set(r.policy, ttlSeconds));
  });
  for (const [status, byPolicy] of ttls) {
    POLICY_ORDER.forEach((policy, rank) => {
      const ttl = byPolicy.get(policy);
      for (const earlier of POLICY_ORDER.slice(0, rank)) {
        const other = byPolicy.get(earlier);
        if (ttl !== undefined && other !== undefined && ttl < other) {
          report(
            "spec.deletionStrategy.deletionRules",
            `for ${status}: ${policy} TTL (${ttl}) must be >= ${earlier} TTL (${other})`,
          );
        }
      }
    });
  }
}

/** The head runs no work and has no GPU. */
function checkHead(job: RayJob, report: Report): void {
  const at = "spec.rayClusterSpec.headGroupSpec";
  const head = job.spec.rayClusterSpec.headGroupSpec;
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
