/**
 * One job's NetworkPolicy: its Ray pods reach each other on every port (Ray's internal ports are random), and its own
 * submitter reaches them on the dashboard port (only the head listens there). Pods of another job in the namespace
 * match neither selector, so jobs are
 * isolated from each other (KubeRay 1.7's own, alpha, policy scopes to one RayCluster the same way:
 * ray-operator/controllers/ray/networkpolicy_controller.go). Selected by our workload label, which KubeRay keeps on
 * every pod from the pod templates (common/pod.go, labelPod), and which the RayCluster's random name cannot give.
 */
import type { NetworkPolicy, RayJob } from "../k8s/types";
import { WORKLOAD_LABEL } from "../k8s/labels";
import { SUBMITTER_LABEL } from "../security/pods";
import { DASHBOARD_PORT, policy, RAY_NODE_LABEL } from "../security/namespace";

/** Name of a job's NetworkPolicy. */
export const jobPolicyName = (job: string) => `${job}-ray-peers`;

/** The job's Ray pods among themselves; its submitter to its head's dashboard. */
export function jobNetworkPolicy(job: RayJob, labels: Record<string, string>): NetworkPolicy {
  const name = job.metadata.name;
  const rayPods = { podSelector: { matchLabels: { [WORKLOAD_LABEL]: name, ...RAY_NODE_LABEL } } };
  const submitter = { podSelector: { matchLabels: { [WORKLOAD_LABEL]: name, ...SUBMITTER_LABEL } } };
  return policy(
    job.metadata.namespace ?? "default",
    jobPolicyName(name),
    {
      podSelector: rayPods.podSelector,
      policyTypes: ["Ingress", "Egress"],
      ingress: [{ from: [rayPods] }, { from: [submitter], ports: [{ protocol: "TCP", port: DASHBOARD_PORT }] }],
      egress: [{ to: [rayPods] }],
    },
    { ...labels, [WORKLOAD_LABEL]: name },
  );
}
