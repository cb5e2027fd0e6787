/**
 * Renders a workload's planned cluster as a `ray.io/v1` RayJob: the cluster spec (../raycluster), the submitter, the
 * deadlines and the cleanup fields. All sizing happened in the plan.
 */
import type { LifecyclePlan } from "../../core/cluster/shape";
import { QUEUE_NAME_LABEL } from "../../core/platform/queueing";
import type { RayJob, RayJobSpec } from "../k8s/types";
import { MANAGED_BY, WORKLOAD_LABEL } from "../k8s/labels";
import { POD_ANNOTATIONS } from "../raycluster/labels";
import { renderRayClusterSpec } from "../raycluster/spec";
import type { RayResourceInput } from "../resources/api";
import { submitterTemplate } from "../security/pods";

/** Shutdown with a TTL (dev), or deletion rules per outcome (prod). */
function cleanupFields(
  lifecycle: LifecyclePlan,
): Pick<RayJobSpec, "shutdownAfterJobFinishes" | "ttlSecondsAfterFinished" | "deletionStrategy"> {
  const c = lifecycle.cleanup;
  if (c.mode === "shutdown") return { shutdownAfterJobFinishes: true, ttlSecondsAfterFinished: c.ttlSeconds };
  return {
    deletionStrategy: { deletionRules: c.rules.map((r) => ({ policy: r.policy, condition: { ...r.condition } })) },
  };
}

/** Labels of the job, its pods and its submitter. */
const jobLabels = (input: RayResourceInput): Record<string, string> => ({
  ...MANAGED_BY,
  [WORKLOAD_LABEL]: input.name,
  "ray-gpu.io/kind": input.kind,
  "ray-gpu.io/environment": input.environment,
});

/** Renders the RayJob. */
export function renderRayJob(input: RayResourceInput): RayJob {
  const { lifecycle } = input.shape;
  const labels = jobLabels(input);
  const submitter = submitterTemplate(input.image, labels, input.shape.head.nodeSelector);
  const queue: Record<string, string> = input.queueName ? { [QUEUE_NAME_LABEL]: input.queueName } : {};
  return {
    apiVersion: "ray.io/v1",
    kind: "RayJob",
    metadata: { name: input.name, namespace: input.namespace, labels: { ...labels, ...queue } },
    spec: {
      entrypoint: input.entrypoint,
      ...(input.runtimeEnvYAML ? { runtimeEnvYAML: input.runtimeEnvYAML } : {}),
      // No `suspend`: Kueue's webhook creates a labelled RayJob suspended and unsuspends it on admission. Rendering it
      // would make every refreshed, admitted job differ from its inputs (suspend false → true) and be replaced.
      submissionMode: "K8sJobMode",
      submitterPodTemplate: { ...submitter, metadata: { ...submitter.metadata, annotations: { ...POD_ANNOTATIONS } } },
      backoffLimit: lifecycle.backoffLimit,
      activeDeadlineSeconds: lifecycle.activeDeadlineSeconds,
      preRunningDeadlineSeconds: lifecycle.preRunningDeadlineSeconds,
      ...cleanupFields(lifecycle),
      rayClusterSpec: renderRayClusterSpec(input, labels),
    },
  };
}
