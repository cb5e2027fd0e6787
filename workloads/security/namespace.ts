/**
 * The workload namespace's isolation: Pod Security Admission labels and NetworkPolicies that deny everything a Ray
 * job does not need. Pure: the platform creates these objects, and `ray-gpu render` writes them beside the jobs.
 *
 * Ray pods of one cluster talk on random ports (raylets, object managers, workers), so they may reach each other on
 * any port; that is allowed per job (`jobNetworkPolicy` in `../rayjob/network-policy.ts`), never across jobs. From outside,
 * only KubeRay's operator (here) and the job's own submitter (per job) reach the head, on the dashboard port.
 */
import type { KubeObject, NetworkPolicy, NetworkPolicyPeer } from "../k8s/types";
import { ADDON_NAMESPACES } from "../../core/platform/namespaces";
import { cidrRange, holds } from "../../core/config/address-set";

/** Pod Security Admission: enforce `baseline`, warn and audit `restricted` (rendered Ray pods meet `restricted`). */
export const POD_SECURITY_LABELS = {
  "pod-security.kubernetes.io/enforce": "baseline",
  "pod-security.kubernetes.io/warn": "restricted",
  "pod-security.kubernetes.io/audit": "restricted",
} as const;

/** What the namespace's pods may reach beyond the cluster. */
export interface EgressOptions {
  /** CIDRs pods may reach on TCP 443 (S3, package mirrors, model hubs). @default ["0.0.0.0/0"] */
  readonly httpsCidrs: readonly string[];
}

/** Label of namespaces whose pods may scrape Ray's metrics port. */
export const METRICS_SCRAPER_LABEL = { "ray-gpu.io/metrics-scraper": "true" } as const;

/** Label KubeRay puts on every Ray pod (ray-operator/controllers/ray/common/pod.go, labelPod). */
export const RAY_NODE_LABEL = { "ray.io/is-ray-node": "yes" } as const;
/** Label KubeRay puts on head pods. */
export const HEAD_LABEL = { "ray.io/node-type": "head" } as const;
const RAY_NODES = { podSelector: { matchLabels: { ...RAY_NODE_LABEL } } };
const HEADS = HEAD_LABEL;
const KUBERAY_OPERATOR: NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ADDON_NAMESPACES.kuberayOperator } },
  podSelector: { matchLabels: { "app.kubernetes.io/name": "kuberay-operator" } },
};
const KUBE_DNS: NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ADDON_NAMESPACES.kubeSystem } },
  podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
};
/** EC2's instance metadata service: pods get AWS credentials from EKS Pod Identity, never from the node's role. */
const IMDS = "169.254.169.254/32";
/** Whether a range holds the metadata address, however it is written (`0.0.0.0/0`, `128.0.0.0/1`, `169.254.0.0/16`). */
function holdsImds(cidr: string): boolean {
  const range = cidrRange(cidr);
  return range !== undefined && range.first !== range.last && holds(range, cidrRange(IMDS)!.first);
}
/** The EKS Pod Identity agent's link-local address (TCP 80). */
const POD_IDENTITY_AGENT = "169.254.170.23/32";
/** The head's dashboard and job API port. */
export const DASHBOARD_PORT = 8265;
const METRICS_PORT = 8080;

/** A NetworkPolicy object. */
export function policy(namespace: string, name: string, spec: NetworkPolicy["spec"], labels: Record<string, string>) {
  const np: NetworkPolicy = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name, namespace, labels: { ...labels } },
    spec,
  };
  return np;
}

/** Nothing in, nothing out, for every pod of the namespace, unless another policy allows it. */
const denyAll = (): NetworkPolicy["spec"] => ({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });

/** The head's dashboard (job API) from KubeRay's operator; each job's submitter is allowed by that job's policy. */
const headIngress = (): NetworkPolicy["spec"] => ({
  podSelector: { matchLabels: HEADS },
  policyTypes: ["Ingress"],
  ingress: [{ from: [KUBERAY_OPERATOR], ports: [{ protocol: "TCP", port: DASHBOARD_PORT }] }],
});

const metricsIngress = (): NetworkPolicy["spec"] => ({
  podSelector: RAY_NODES.podSelector,
  policyTypes: ["Ingress"],
  ingress: [
    {
      from: [{ namespaceSelector: { matchLabels: { ...METRICS_SCRAPER_LABEL } } }],
      ports: [{ protocol: "TCP", port: METRICS_PORT }],
    },
  ],
});

/** DNS, the Pod Identity agent and HTTPS out; the submitter to the heads' dashboard. */
const egress = (options: EgressOptions): NetworkPolicy["spec"] => ({
  podSelector: {},
  policyTypes: ["Egress"],
  egress: [
    {
      to: [KUBE_DNS],
      ports: [
        { protocol: "UDP", port: 53 },
        { protocol: "TCP", port: 53 },
      ],
    },
    { to: [{ ipBlock: { cidr: POD_IDENTITY_AGENT } }], ports: [{ protocol: "TCP", port: 80 }] },
    {
      to: options.httpsCidrs.map((cidr) => ({ ipBlock: holdsImds(cidr) ? { cidr, except: [IMDS] } : { cidr } })),
      ports: [{ protocol: "TCP", port: 443 }],
    },
    { to: [{ podSelector: { matchLabels: HEADS } }], ports: [{ protocol: "TCP", port: DASHBOARD_PORT }] },
  ],
});

/** The namespace's NetworkPolicies: deny by default, then the few flows a RayJob needs. */
export function namespacePolicies(
  namespace: string,
  options: EgressOptions,
  labels: Record<string, string>,
): KubeObject[] {
  return [
    policy(namespace, "ray-gpu-default-deny", denyAll(), labels),
    policy(namespace, "ray-gpu-head-ingress", headIngress(), labels),
    policy(namespace, "ray-gpu-metrics-ingress", metricsIngress(), labels),
    policy(namespace, "ray-gpu-egress", egress(options), labels),
  ];
}
