/**
 * What the workload namespace's NetworkPolicies let through, evaluated as Kubernetes does (a pod selected by a
 * policy of a direction is isolated in that direction; a flow passes when the sender's egress and the receiver's
 * ingress both allow it): Ray pods of one job reach each other on any port, never another job's; a job's submitter
 * reaches only its own head's dashboard. The rendered objects of the prod stack, two of its jobs.
 */
import { describe, expect, it } from "vitest";
import { planStack } from "../../../workloads/stack";
import type { NetworkPolicy, NetworkPolicyPeer } from "../../../workloads/k8s/types";
import { ADDON_NAMESPACES } from "../../../core/platform/namespaces";
import { METRICS_SCRAPER_LABEL } from "../../../workloads/security/namespace";
import { repoStack, runtime } from "../../helpers/fixtures";

interface Pod {
  readonly namespace: string;
  readonly namespaceLabels: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
}

const selects = (selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>) =>
  Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/** Whether a rule's peer is `pod`, for a policy in `policyNamespace` (no namespaceSelector: the policy's own). */
function peerIs(peer: NetworkPolicyPeer, pod: Pod, policyNamespace: string): boolean {
  if (peer.ipBlock) return false;
  const namespaceOk = peer.namespaceSelector
    ? selects(peer.namespaceSelector, pod.namespaceLabels)
    : pod.namespace === policyNamespace;
  return namespaceOk && selects(peer.podSelector, pod.labels);
}

/** One side of a connection: `pod`'s traffic in `direction` with `other` on TCP `port`. */
interface Flow {
  readonly pod: Pod;
  readonly other: Pod;
  readonly port: number;
  readonly direction: "Ingress" | "Egress";
}

/** Whether the policies of the pod's namespace allow the flow. */
function allows(policies: readonly NetworkPolicy[], { pod, other, port, direction }: Flow) {
  const own = policies.filter(
    (p) =>
      p.metadata.namespace === pod.namespace &&
      p.spec.policyTypes.includes(direction) &&
      selects(p.spec.podSelector, pod.labels),
  );
  if (own.length === 0) return true; // not isolated in this direction
  return own.some((p) =>
    (direction === "Ingress" ? (p.spec.ingress ?? []) : (p.spec.egress ?? [])).some((rule) => {
      const peers = "from" in rule ? rule.from : (rule as { to?: NetworkPolicyPeer[] }).to;
      const portOk = !rule.ports || rule.ports.some((r) => r.protocol === "TCP" && r.port === port);
      return portOk && (!peers || peers.some((peer) => peerIs(peer, other, p.metadata.namespace!)));
    }),
  );
}

const flows = (policies: readonly NetworkPolicy[], from: Pod, to: Pod, port: number) =>
  allows(policies, { pod: from, other: to, port, direction: "Egress" }) &&
  allows(policies, { pod: to, other: from, port, direction: "Ingress" });

describe("network isolation of the workload namespace", () => {
  const plan = planStack(repoStack("prod"), { runtime, requireRender: true });
  const policies = [...plan.shared, ...plan.objects.flatMap((o) => o.objects)].filter(
    (o): o is NetworkPolicy => o.kind === "NetworkPolicy",
  );
  const ns = { namespace: plan.namespace, namespaceLabels: { "kubernetes.io/metadata.name": plan.namespace } };
  const ray = (job: string, type: "head" | "worker"): Pod => ({
    ...ns,
    labels: { "ray-gpu.io/workload": job, "ray.io/is-ray-node": "yes", "ray.io/node-type": type },
  });
  const submitter = (job: string): Pod => ({
    ...ns,
    labels: { "ray-gpu.io/workload": job, "ray-gpu.io/role": "submitter" },
  });
  const operator: Pod = {
    namespace: ADDON_NAMESPACES.kuberayOperator,
    namespaceLabels: { "kubernetes.io/metadata.name": ADDON_NAMESPACES.kuberayOperator },
    labels: { "app.kubernetes.io/name": "kuberay-operator" },
  };
  const prometheus: Pod = {
    namespace: "monitoring",
    namespaceLabels: { "kubernetes.io/metadata.name": "monitoring", ...METRICS_SCRAPER_LABEL },
    labels: { "app.kubernetes.io/name": "prometheus" },
  };

  it("lets one job's Ray pods reach each other on any port, and no other job's", () => {
    expect(flows(policies, ray("llm-pretrain", "worker"), ray("llm-pretrain", "head"), 6379)).toBe(true);
    expect(flows(policies, ray("llm-pretrain", "worker"), ray("llm-pretrain", "worker"), 40123)).toBe(true);
    expect(flows(policies, ray("llm-pretrain", "worker"), ray("embed-chunks", "head"), 6379)).toBe(false);
    expect(flows(policies, ray("embed-chunks", "worker"), ray("llm-pretrain", "worker"), 40123)).toBe(false);
  });

  it("lets a job's submitter reach its own head's dashboard only; the operator reaches every head's", () => {
    expect(flows(policies, submitter("llm-pretrain"), ray("llm-pretrain", "head"), 8265)).toBe(true);
    expect(flows(policies, submitter("llm-pretrain"), ray("embed-chunks", "head"), 8265)).toBe(false);
    expect(flows(policies, submitter("llm-pretrain"), ray("llm-pretrain", "head"), 6379)).toBe(false);
    expect(flows(policies, operator, ray("embed-chunks", "head"), 8265)).toBe(true);
  });

  it("lets Prometheus scrape the metrics port, and nothing else", () => {
    expect(flows(policies, prometheus, ray("llm-pretrain", "worker"), 8080)).toBe(true);
    expect(flows(policies, prometheus, ray("llm-pretrain", "worker"), 6379)).toBe(false);
  });
});
