/**
 * Checks at plan time what KubeRay (v1.7.0) and the scheduler would only report after apply: GPU on the head,
 * workers larger than their node, missing tolerations, lifecycle rules KubeRay rejects, replica bounds, and an
 * object store larger than /dev/shm. Mirrors `ray-operator/controllers/ray/utils/validation.go`.
 */
import type { ConfigIssue } from "../../core/errors";
import { GIB, parseQuantity } from "../../core/quantity";
import { POOL_LABEL, type PoolsPlan } from "../../core/pools";
import { MAX_RAYJOB_NAME_LENGTH } from "../../core/config/workloads";
import { SHM_PATH } from "../../core/cluster/shape";
import type { PodSpec, RayJob, RayStartParams } from "./types";

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const POLICY_ORDER = ["DeleteWorkers", "DeleteCluster", "DeleteSelf"] as const;

/** Bytes of the memory-backed volume mounted at /dev/shm, or undefined. */
function shmBytes(pod: PodSpec): number | undefined {
  const mount = pod.containers[0]?.volumeMounts?.find((m) => m.mountPath === SHM_PATH);
  const vol = mount && pod.volumes?.find((v) => v.name === mount.name);
  const size = vol?.emptyDir?.medium === "Memory" ? vol.emptyDir.sizeLimit : undefined;
  return size === undefined ? undefined : parseQuantity(size);
}

function checkObjectStore(params: RayStartParams, pod: PodSpec, at: string, add: (p: string, m: string, v?: unknown) => void) {
  const store = params["object-store-memory"];
  if (store === undefined) return;
  const shm = shmBytes(pod);
  if (shm === undefined) add(`${at}.template.spec.volumes`, "object-store-memory is set but no memory-backed volume is mounted at /dev/shm");
  else if (Number(store) > shm) {
    add(`${at}.rayStartParams.object-store-memory`, `object store (${(Number(store) / GIB).toFixed(1)} GiB) must fit in /dev/shm (${(shm / GIB).toFixed(1)} GiB), or Ray falls back to slow disk-backed memory`, store);
  }
}

/** All problems of `job` against the stack's pools; empty when KubeRay and the scheduler would accept it. */
export function checkRayJob(job: RayJob, pools: PoolsPlan): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const base = `RayJob ${job.metadata.name}`;
  const add = (path: string, message: string, value?: unknown) =>
    issues.push(value === undefined ? { path: `${base}: ${path}`, message } : { path: `${base}: ${path}`, message, value });
  const { spec } = job;

  if (job.metadata.name.length > MAX_RAYJOB_NAME_LENGTH) add("metadata.name", `RayJob name should be no more than ${MAX_RAYJOB_NAME_LENGTH} characters`, job.metadata.name);
  if (!DNS1035.test(job.metadata.name)) add("metadata.name", "RayJob name should be a valid DNS1035 label", job.metadata.name);
  if (!(spec.activeDeadlineSeconds > 0)) add("spec.activeDeadlineSeconds", "activeDeadlineSeconds must be a positive integer", spec.activeDeadlineSeconds);
  if (!(spec.preRunningDeadlineSeconds > 0)) add("spec.preRunningDeadlineSeconds", "preRunningDeadlineSeconds must be a positive integer", spec.preRunningDeadlineSeconds);
  if (spec.backoffLimit < 0) add("spec.backoffLimit", "backoffLimit must be a non-negative integer", spec.backoffLimit);
  if ((spec.ttlSecondsAfterFinished ?? 0) > 0 && spec.shutdownAfterJobFinishes !== true) {
    add("spec.ttlSecondsAfterFinished", "a RayJob with shutdownAfterJobFinishes set to false cannot have TTLSecondsAfterFinished", spec.ttlSecondsAfterFinished);
  }
  const rules = spec.deletionStrategy?.deletionRules;
  if (rules) {
    if (spec.shutdownAfterJobFinishes) add("spec.deletionStrategy.deletionRules", "spec.shutdownAfterJobFinishes and spec.deletionStrategy.deletionRules are mutually exclusive");
    if ((spec.ttlSecondsAfterFinished ?? 0) > 0) add("spec.ttlSecondsAfterFinished", "a global TTL cannot be combined with deletionRules; put ttlSeconds on each rule", spec.ttlSecondsAfterFinished);
    const seen = new Map<string, number>();
    rules.forEach((r, i) => {
      const { jobStatus, jobDeploymentStatus, ttlSeconds = 0 } = r.condition;
      if ((jobStatus === undefined) === (jobDeploymentStatus === undefined)) add(`spec.deletionStrategy.deletionRules[${i}].condition`, "exactly one of jobStatus and jobDeploymentStatus must be set");
      const key = `${jobStatus ? `JobStatus '${jobStatus}'` : `JobDeploymentStatus '${jobDeploymentStatus}'`}|${r.policy}`;
      if (seen.has(key)) add(`spec.deletionStrategy.deletionRules[${i}]`, `duplicate rule for DeletionPolicyType '${r.policy}' and ${key.split("|")[0]}`);
      seen.set(key, ttlSeconds);
    });
    for (const [key, ttl] of seen) {
      const [status, policy] = key.split("|") as [string, string];
      const rank = POLICY_ORDER.indexOf(policy as (typeof POLICY_ORDER)[number]);
      for (const earlier of POLICY_ORDER.slice(0, Math.max(rank, 0))) {
        const other = seen.get(`${status}|${earlier}`);
        if (rank > 0 && other !== undefined && ttl < other) {
          add("spec.deletionStrategy.deletionRules", `for ${status}: ${policy} TTL (${ttl}) must be >= ${earlier} TTL (${other})`);
        }
      }
    }
  }

  const headAt = "spec.rayClusterSpec.headGroupSpec";
  const head = spec.rayClusterSpec.headGroupSpec;
  const headContainer = head.template.spec.containers[0];
  if (head.rayStartParams["num-cpus"] !== "0") add(`${headAt}.rayStartParams.num-cpus`, 'the head must run no work: set num-cpus "0"', head.rayStartParams["num-cpus"]);
  if (headContainer?.resources.limits["nvidia.com/gpu"] !== undefined || (head.rayStartParams["num-gpus"] ?? "0") !== "0") {
    add(`${headAt}.template.spec.containers[0].resources.limits`, "the head must not get a GPU: it belongs on the CPU pool", headContainer?.resources.limits["nvidia.com/gpu"]);
  }
  checkObjectStore(head.rayStartParams, head.template.spec, headAt, add);

  spec.rayClusterSpec.workerGroupSpecs.forEach((g, i) => {
    const at = `spec.rayClusterSpec.workerGroupSpecs[${i}]`;
    if (g.minReplicas > g.maxReplicas) add(`${at}.minReplicas`, `worker group ${g.groupName} has minReplicas ${g.minReplicas} greater than maxReplicas ${g.maxReplicas}`, g.minReplicas);
    if (g.replicas < g.minReplicas || g.replicas > g.maxReplicas) add(`${at}.replicas`, `replicas must be between minReplicas (${g.minReplicas}) and maxReplicas (${g.maxReplicas})`, g.replicas);
    checkObjectStore(g.rayStartParams, g.template.spec, at, add);
    const poolName = g.template.spec.nodeSelector?.[POOL_LABEL];
    const pool = pools.gpu.find((p) => p.name === poolName);
    if (!pool) {
      add(`${at}.template.spec.nodeSelector`, `must select a GPU pool with ${POOL_LABEL}; pools are ${pools.gpu.map((p) => p.name).join(", ")}`, poolName);
      return;
    }
    if (g.replicas > pool.maxNodes) add(`${at}.replicas`, `pool "${pool.name}" has at most ${pool.maxNodes} nodes`, g.replicas);
    const limits = g.template.spec.containers[0]?.resources.limits;
    const want = {
      cpu: parseQuantity(limits?.cpu ?? "0"),
      memory: parseQuantity(limits?.memory ?? "0"),
      gpu: parseQuantity(limits?.["nvidia.com/gpu"] ?? "0"),
    };
    const b = pool.podBudget;
    if (want.cpu > b.cpus) add(`${at}.template.spec.containers[0].resources.limits.cpu`, `a ${pool.instanceType} node offers ${b.cpus} CPUs to a Ray pod`, limits?.cpu);
    if (want.memory > b.memoryGiB * GIB) add(`${at}.template.spec.containers[0].resources.limits.memory`, `a ${pool.instanceType} node offers ${b.memoryGiB}Gi to a Ray pod`, limits?.memory);
    if (want.gpu > b.gpus) add(`${at}.template.spec.containers[0].resources.limits.nvidia.com/gpu`, `a ${pool.instanceType} node has ${b.gpus} GPU(s)`, limits?.["nvidia.com/gpu"]);
    for (const t of pool.taints) {
      const ok = g.template.spec.tolerations?.some((tol) => tol.key === t.key && tol.effect === t.effect && (tol.operator === "Exists" || tol.value === t.value));
      if (!ok) add(`${at}.template.spec.tolerations`, `must tolerate the pool's taint ${t.key}=${t.value}:${t.effect}, or no node will take the pod`);
    }
  });
  return issues;
}
