/**
 * The RayJob as a Ray resource: the job, the disruption budget of its pods (its submitter among them) and the network
 * policy that keeps its pods to themselves.
 */
import type { RayResource } from "../resources/api";
import { MANAGED_BY } from "../k8s/labels";
import { renderDisruptionBudget } from "../raycluster/disruption";
import { checkRayJob } from "./checks";
import { jobNetworkPolicy } from "./network-policy";
import { renderRayJob } from "./render";

/** Pods of a RayJob beside its cluster: the submitter (K8sJobMode). */
const SUBMITTER_PODS = 1;

export const RAY_JOB: RayResource<"RayJob"> = {
  kind: "RayJob",
  render(input) {
    const job = renderRayJob(input);
    const budget = renderDisruptionBudget({
      metadata: job.metadata,
      cluster: job.spec.rayClusterSpec,
      companionPods: SUBMITTER_PODS,
    });
    return [job, budget, jobNetworkPolicy(job, MANAGED_BY)];
  },
  check: checkRayJob,
};
