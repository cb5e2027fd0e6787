/**
 * Jobs Kueue can never admit, as config problems: a job whose demand on one flavor exceeds that flavor's whole nominal
 * quota stays pending forever (queueing waits only for quota other jobs hold). Kueue counts a RayJob's head, its worker
 * groups and, in `K8sJobMode`, its submitter pod (kubernetes-sigs/kueue v0.19.2
 * pkg/controller/jobs/rayjob/rayjob_controller.go `PodSets`), so the head and submitter together must fit the CPU
 * pool's quota. Pure.
 */
import type { ConfigIssue } from "../../core/errors";
import { neverAdmitted, type NeverAdmitted, type QueueDemand, type QueuePlan } from "../../core/platform/queueing";
import { flavorName } from "./kueue";

/** A resource's amount in words. */
const amount = (resource: NeverAdmitted["resource"], n: number) =>
  resource === "cpu"
    ? `${Number(n.toFixed(3))} CPUs`
    : resource === "memory"
      ? `${Number(n.toFixed(2))} GiB of memory`
      : `${n} GPUs`;

/** The fix, by the pool's role. */
const FIX: Readonly<Record<NeverAdmitted["role"], string>> = {
  system:
    "raise platform.cpuNodeGroup.maxNodes or choose a larger instanceType (the CPU pool's quota is what its nodes " +
    "at maxNodes have left after the platform's pods), or give the job fewer GPUs (its head grows with its workers)",
  gpu: "raise the pool's maxNodes, or give the job fewer GPUs",
};

/** What the job's pods ask of a flavor, by the pool's role. */
const WHO: Readonly<Record<NeverAdmitted["role"], string>> = {
  system: "its head and submitter pods ask",
  gpu: "its workers ask",
};

/** One issue per job and flavor that can never admit it (every resource it asks too much of), at the job's path. */
export function neverAdmittedIssues(
  queue: QueuePlan,
  demands: readonly QueueDemand[],
  pathOf: (workload: string) => string,
): ConfigIssue[] {
  const groups = new Map<string, NeverAdmitted[]>();
  for (const n of neverAdmitted(queue, demands)) {
    const key = `${n.workload}\u0000${n.pool}`;
    groups.set(key, [...(groups.get(key) ?? []), n]);
  }
  return [...groups.values()].map((all) => {
    const n = all[0]!;
    const asked = all.map((a) => amount(a.resource, a.asked)).join(" and ");
    const quota = all.map((a) => amount(a.resource, a.quota)).join(" and ");
    return {
      path: pathOf(n.workload),
      message:
        `Kueue can never admit ${n.workload}: ${WHO[n.role]} ${asked} of pool ${n.pool} (flavor ` +
        `${flavorName(queue, n.pool)}), whose whole quota is ${quota}, so it would wait in the queue forever; ` +
        FIX[n.role],
    };
  });
}
