/**
 * Checks a RayJob at plan time as KubeRay (v1.7.0) and Kueue would only after apply: its name, lifecycle rules KubeRay
 * rejects, Kueue's rules for a queued job, and its cluster spec (../raycluster/checks). Mirrors
 * `ray-operator/controllers/ray/utils/validation.go`, one named check per concern.
 */
import { QUEUE_NAME_LABEL } from "../../core/platform/queueing";
import { MAX_RAYJOB_NAME_LENGTH } from "../../core/config/workloads";
import type { ConfigIssue } from "../../core/errors";
import type { PoolsPlan } from "../../core/pools";
import type { DeletionRuleSpec, RayJob } from "../k8s/types";
import { checkRayClusterSpec, type Report } from "../raycluster/checks";

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/** Per job status, TTLs must not decrease in this order. */
const POLICY_ORDER = ["DeleteWorkers", "DeleteCluster", "DeleteSelf"] as const;

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
  checkRayClusterSpec(job.spec.rayClusterSpec, "spec.rayClusterSpec", pools, report);
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
