/**
 * What the per-node DaemonSets take from a node's allocatable before a Ray pod is sized.
 *
 * Requests come from the upstream charts and manifests (a sum the scheduler enforces); agents that set no
 * request still use memory, so a headroom covers them. Teams running more agents (log or metric shippers)
 * raise `ray-gpu:platform.daemonSetReserve`.
 */

/** One DaemonSet pod's requests. */
export interface DaemonSetRequest {
  readonly name: string;
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  /** Where the figure comes from. */
  readonly source: string;
}

/** DaemonSets on every node of the platform, GPU nodes included. */
export const NODE_DAEMONSETS: readonly DaemonSetRequest[] = [
  {
    name: "aws-node (VPC CNI + network policy agent)",
    cpuMillis: 50,
    memoryMiB: 0,
    source:
      "aws/amazon-vpc-cni-k8s charts/aws-vpc-cni/values.yaml: requests.cpu 25m, applied to aws-node and aws-eks-nodeagent",
  },
  {
    name: "kube-proxy",
    cpuMillis: 100,
    memoryMiB: 0,
    source:
      "EKS add-on; 100m is the commonly quoted request (not verified from a manifest), no memory request (aws/containers-roadmap#1509)",
  },
  {
    name: "ebs-csi-node",
    cpuMillis: 30,
    memoryMiB: 120,
    source: "kubernetes-sigs/aws-ebs-csi-driver deploy/kubernetes/base/node.yaml: 3 containers × (10m, 40Mi)",
  },
  {
    name: "eks-pod-identity-agent",
    cpuMillis: 0,
    memoryMiB: 0,
    source: "aws/eks-pod-identity-agent charts values.yaml: resources {}",
  },
];

/** What the DCGM exporter requests on each GPU node: its chart values are built from this. */
export const DCGM_EXPORTER_REQUESTS = { cpuMillis: 100, memoryMiB: 128 } as const;

/** DaemonSets only on GPU nodes. */
export const GPU_NODE_DAEMONSETS: readonly DaemonSetRequest[] = [
  {
    name: "nvidia-device-plugin",
    cpuMillis: 0,
    memoryMiB: 0,
    source: "NVIDIA/k8s-device-plugin deployments/helm/nvidia-device-plugin/values.yaml: resources {}",
  },
  {
    name: "dcgm-exporter",
    ...DCGM_EXPORTER_REQUESTS,
    source: "our dcgm-exporter values (core/observability/charts.ts) request it; the chart's own default is {}",
  },
];

/**
 * Headroom for what agents without requests really use (device plugin, pod identity agent, node exporter),
 * so a Ray pod sized to the last GiB does not push the node into memory-pressure eviction.
 */
export const UNREQUESTED_AGENT_HEADROOM = { cpuMillis: 100, memoryMiB: 1024 } as const;

/** CPU and memory a node's DaemonSets hold back from Ray pods. */
export interface DaemonSetReserve {
  readonly cpuMillis: number;
  readonly memoryMiB: number;
}

/** Default reserve for a node of the given role: the sum of the requests above plus the headroom. */
export function defaultDaemonSetReserve(role: "gpu" | "cpu"): DaemonSetReserve {
  const sets = role === "gpu" ? [...NODE_DAEMONSETS, ...GPU_NODE_DAEMONSETS] : NODE_DAEMONSETS;
  return {
    cpuMillis: sets.reduce((s, d) => s + d.cpuMillis, 0) + UNREQUESTED_AGENT_HEADROOM.cpuMillis,
    memoryMiB: sets.reduce((s, d) => s + d.memoryMiB, 0) + UNREQUESTED_AGENT_HEADROOM.memoryMiB,
  };
}
