/**
 * The PodDisruptionBudget of a Ray cluster's pods: no voluntary eviction (a drain, a node group update) while they
 * run. It selects the head, the workers and the pods that run beside the cluster (a RayJob's submitter) and requires
 * all of them (`minAvailable` as a whole number: the form Kubernetes supports for pods whose owner, a RayCluster or a
 * Job, has no scale subresource). Workers on spot capacity are left out ({@link EVICT_ON_NOTICE_LABEL}): a drain on an
 * interruption notice must evict them so their preStop hook checkpoints the step in flight (./preemption); a budget
 * holding them would refuse the eviction until the instance is reclaimed. It outlives the job harmlessly (it selects no
 * pods then). KubeRay's own deletions are not evictions: training survives those by restarting from its last
 * checkpoint.
 */
import type { ObjectMeta, PodDisruptionBudget, RayClusterSpec } from "../k8s/types";
import { MANAGED_BY, WORKLOAD_LABEL } from "../k8s/labels";
import { EVICT_ON_NOTICE_LABEL } from "./preemption";

/** Who the budget is for, and how many of its pods run outside the cluster's groups. */
export interface DisruptionBudgetInput {
  /** The Ray resource's metadata: its name is the workload's, and names the budget. */
  readonly metadata: ObjectMeta;
  readonly cluster: RayClusterSpec;
  /** Pods of the workload beside the head and the workers, labelled with its name (a RayJob's submitter). */
  readonly companionPods: number;
}

/** The budget holding the head, every worker off spot capacity and the companion pods. */
export function renderDisruptionBudget(input: DisruptionBudgetInput): PodDisruptionBudget {
  const name = input.metadata.name;
  const { key, value } = EVICT_ON_NOTICE_LABEL;
  const groups = input.cluster.workerGroupSpecs;
  const held = groups.filter((g) => g.template.metadata?.labels?.[key] !== value);
  const workers = held.reduce((n, g) => n + g.replicas, 0);
  const spot = held.length < groups.length;
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace: input.metadata.namespace, labels: { ...MANAGED_BY, [WORKLOAD_LABEL]: name } },
    spec: {
      minAvailable: 1 + workers + input.companionPods,
      selector: {
        matchLabels: { [WORKLOAD_LABEL]: name },
        ...(spot ? { matchExpressions: [{ key, operator: "DoesNotExist" as const }] } : {}),
      },
    },
  };
}
