/**
 * Spot with an on-demand fallback (`capacityType: spot-with-fallback`): how a pool's pods get spot nodes first and
 * on-demand nodes when spot has none to give, and what the Cluster Autoscaler is told for it. Pure.
 *
 * The mechanism is the Cluster Autoscaler's, not Kueue's. At the pinned versions:
 * - Kueue v0.19.2 (commit 8eab6877) picks a flavor for quota only. After a failed ProvisioningRequest check
 *   (`pkg/controller/admissionchecks/provisioning/controller.go`, `syncCheckStates`: `Retry` while
 *   `retryStrategy.backoffLimitCount` allows, then `Rejected`) or a `waitForPodsReady` timeout, the workload is
 *   evicted and requeued, and the flavor scan starts again at the first flavor (`pkg/scheduler/scheduler.go`,
 *   `lastAssignmentOutdated`; `pkg/scheduler/flavorassigner/flavorassigner.go`: `NextFlavorToTryForPodSetResource`
 *   resumes only within the scheduling cycles of one pending period); a `Rejected` check deactivates the workload.
 *   `flavorFungibility` (`TryNextFlavor`) is about borrowing and preemption, not nodes. Concurrent Admission (alpha,
 *   gate off) pursues every flavor at once with no delay (its KEP 8691's `createDelaySeconds` is not in the v0.19.2
 *   API). So a flavor that selects `eks.amazonaws.com/capacityType: SPOT` would pin a job to spot for good: a fallback
 *   pool keeps one flavor over both groups, and its quota holds them to `maxNodes` nodes together.
 * - Cluster Autoscaler v1.36.1: the `priority` expander (`expander/priority/priority.go`, `BestOptions`) prefers the
 *   groups whose Auto Scaling group name matches the highest priority; EKS names a managed group's Auto Scaling group
 *   `eks-<node group name>-<uuid>` (aws/containers-roadmap#1304, terraform-aws-modules/terraform-aws-eks#3007). When
 *   EC2 has no spot capacity the ASG's scaling activity fails; the AWS provider marks the missing instances
 *   `placeholder-cannot-be-fulfilled`, an out-of-resources error (`cloudprovider/aws/auto_scaling_groups.go`,
 *   `isNodeGroupAvailable`, read on its 1-minute refresh), and the cluster state backs the group off
 *   (`clusterstate/clusterstate.go`, `handleInstanceCreationErrorsForNodeGroup`;
 *   `--initial-node-group-backoff-duration` 5 min): the next loop scales the on-demand group. A spot node that neither
 *   comes nor fails is given up after `--max-node-provision-time` (`updateScaleRequests`, "ScaleUpTimedOut"), the
 *   scale-up reverted and the group backed off the same way. AWS reads no per-group override of that flag
 *   (`cloudprovider/aws/aws_manager.go`, `GetAsgOptions`), so it is one value for every node group. No
 *   ProvisioningRequest is used (`--enable-provisioning-requests` stays off): a failed one would only requeue to spot.
 * - Chart 9.59.0 writes `expanderPriorities` into the ConfigMap `cluster-autoscaler-priority-expander` and grants the
 *   RBAC when `extraArgs.expander` names `priority` (`templates/priority-expander-configmap.yaml`, `role.yaml`).
 */
import { SPOT_WAIT_MINUTES } from "../config/platform";
import type { GpuPoolPlan } from "../pools";
import type { NodeGroupPlan } from "./node-groups";

/** Priorities of the expander: a fallback pool's spot group above every other group. */
export const EXPANDER_PRIORITY = { spot: 20, other: 10 } as const;

/** What the Cluster Autoscaler is told for the stack's spot-with-fallback pools. */
export interface SpotFallbackPlan {
  /** Regular expressions of the spot groups' Auto Scaling group names, preferred by the `priority` expander. */
  readonly preferredGroups: readonly string[];
  /** `--max-node-provision-time`: the longest a pod waits for a spot node before the on-demand group is scaled. */
  readonly maxNodeProvisionMinutes: number;
}

/**
 * The Auto Scaling group of a node group named `name`: EKS calls it `eks-<node group name>-<uuid>`, and the node group
 * is `<name>-` plus the provider's 26-character suffix (a timestamp and a hexadecimal counter).
 */
export const autoScalingGroupPattern = (name: string) => `^eks-${name}-[0-9a-f]{26}-`;

/**
 * The autoscaler's settings for the stack's spot-with-fallback pools, or undefined when it has none (its
 * configuration then stays as it was). Every fallback pool waits the same (a rule of the config).
 */
export function planSpotFallback(
  pools: readonly GpuPoolPlan[],
  groups: readonly NodeGroupPlan[],
): SpotFallbackPlan | undefined {
  const fallback = pools.filter((p) => p.capacityType === "spot-with-fallback");
  if (!fallback.length) return undefined;
  const names = new Set(fallback.map((p) => p.name));
  return {
    preferredGroups: groups
      .filter((g) => names.has(g.pool) && g.capacityType === "SPOT")
      .map((g) => autoScalingGroupPattern(g.name)),
    maxNodeProvisionMinutes: Math.min(...fallback.map((p) => p.spotWaitMinutes ?? SPOT_WAIT_MINUTES.default)),
  };
}

/** The chart values that make the autoscaler prefer spot and give up on it after the wait. */
export function spotFallbackValues(plan: SpotFallbackPlan): {
  extraArgs: Record<string, string>;
  expanderPriorities: Record<string, string[]>;
} {
  return {
    // Ties (groups of one priority) go to least-waste, as without the fallback.
    extraArgs: { expander: "priority,least-waste", "max-node-provision-time": `${plan.maxNodeProvisionMinutes}m` },
    expanderPriorities: {
      [EXPANDER_PRIORITY.spot]: [...plan.preferredGroups],
      // A group no expression matches is never scaled (priority.go): every other group is listed here.
      [EXPANDER_PRIORITY.other]: [".*"],
    },
  };
}
