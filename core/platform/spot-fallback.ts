/**
 * Capacity fallback: how a pool's pods get nodes from its node groups in order, and what the Cluster Autoscaler is told
 * for it. A pool falls back across capacity types (`capacityType: spot-with-fallback`: spot first, on demand when spot
 * has none to give) and across instance types (`fallbackInstanceTypes`: its own size first, then each fallback size in
 * order). With both, every spot group comes before every on-demand group (spot of any size costs less than on-demand
 * of the first), and sizes keep their order within each. Pure.
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
 * - An instance type EC2 has no capacity for fails the same way (`InsufficientInstanceCapacity` in the ASG's scaling
 *   activity, the same placeholder and backoff), so the next size's group is scaled on the next loop.
 * - Chart 9.59.0 writes `expanderPriorities` into the ConfigMap `cluster-autoscaler-priority-expander` and grants the
 *   RBAC when `extraArgs.expander` names `priority` (`templates/priority-expander-configmap.yaml`, `role.yaml`).
 */
import { SPOT_WAIT_MINUTES } from "../config/platform";
import type { GpuPoolPlan } from "../pools";
import type { NodeGroupPlan } from "./node-groups";

/**
 * Priorities of the expander: the last group of a pool's order, and every pool without a fallback, at `other`; each
 * group before it `step` higher than the next (a spot-with-fallback pool of one size: spot at 20).
 */
export const EXPANDER_PRIORITY = { other: 10, step: 10 } as const;

/** One priority of the expander and the Auto Scaling groups it prefers. */
export interface ExpanderTier {
  readonly priority: number;
  /** Regular expressions of Auto Scaling group names. */
  readonly groups: readonly string[];
}

/** What the Cluster Autoscaler is told for the stack's pools with a fallback (capacity type or instance type). */
export interface SpotFallbackPlan {
  /** The groups above `EXPANDER_PRIORITY.other`, highest priority first. */
  readonly tiers: readonly ExpanderTier[];
  /**
   * `--max-node-provision-time`: the longest a pod waits for a node of one group before the next is scaled (the
   * spot-with-fallback pools' `spotWaitMinutes`, else its default).
   */
  readonly maxNodeProvisionMinutes: number;
}

/**
 * The Auto Scaling group of a node group named `name`: EKS calls it `eks-<node group name>-<uuid>`, and the node group
 * is `<name>-` plus the provider's 26-character suffix (a timestamp and a hexadecimal counter).
 */
export const autoScalingGroupPattern = (name: string) => `^eks-${name}-[0-9a-f]{26}-`;

/** A pool's node groups in the order the autoscaler tries them: spot before on-demand, then sizes in order. */
function groupOrder(pool: GpuPoolPlan, groups: readonly NodeGroupPlan[]): NodeGroupPlan[] {
  const own = groups.filter((g) => g.pool === pool.name);
  const rank = (g: NodeGroupPlan) =>
    (g.capacityType === "SPOT" ? 0 : pool.instanceTypes.length) +
    pool.instanceTypes.findIndex((t) => t === g.instanceTypes[0]);
  return [...own].sort((x, y) => rank(x) - rank(y));
}

/**
 * The autoscaler's settings for the stack's pools with a fallback, or undefined when none has one (its configuration
 * then stays as it was). Every spot-with-fallback pool waits the same (a rule of the config).
 */
export function planSpotFallback(
  pools: readonly GpuPoolPlan[],
  groups: readonly NodeGroupPlan[],
): SpotFallbackPlan | undefined {
  const ordered = pools.map((p) => groupOrder(p, groups)).filter((o) => o.length > 1);
  if (!ordered.length) return undefined;
  const byPriority = new Map<number, string[]>();
  for (const order of ordered)
    order.forEach((g, rank) => {
      const priority = EXPANDER_PRIORITY.other + EXPANDER_PRIORITY.step * (order.length - 1 - rank);
      if (priority > EXPANDER_PRIORITY.other)
        byPriority.set(priority, [...(byPriority.get(priority) ?? []), autoScalingGroupPattern(g.name)]);
    });
  const spotPools = pools.filter((p) => p.capacityType === "spot-with-fallback");
  return {
    tiers: [...byPriority].sort(([a], [b]) => b - a).map(([priority, names]) => ({ priority, groups: names })),
    maxNodeProvisionMinutes: Math.min(
      SPOT_WAIT_MINUTES.default,
      ...spotPools.map((p) => p.spotWaitMinutes ?? SPOT_WAIT_MINUTES.default),
    ),
  };
}

/** The chart values that make the autoscaler try each pool's groups in order, giving up on one after the wait. */
export function spotFallbackValues(plan: SpotFallbackPlan): {
  extraArgs: Record<string, string>;
  expanderPriorities: Record<string, string[]>;
} {
  return {
    // Ties (groups of one priority) go to least-waste, as without the fallback.
    extraArgs: { expander: "priority,least-waste", "max-node-provision-time": `${plan.maxNodeProvisionMinutes}m` },
    expanderPriorities: {
      ...Object.fromEntries(plan.tiers.map((t) => [t.priority, [...t.groups]])),
      // A group no expression matches is never scaled (priority.go): every other group is listed here.
      [EXPANDER_PRIORITY.other]: [".*"],
    },
  };
}
