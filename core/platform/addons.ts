/**
 * Cluster add-ons: pinned Helm charts (NVIDIA device plugin, Cluster Autoscaler, KubeRay operator) with their
 * values, and the EKS managed add-ons. Values are plain objects, serialized with sorted keys by the components.
 *
 * Pins and sources:
 * - kuberay-operator 1.7.0 (https://ray-project.github.io/kuberay-helm/; `shared/kuberay/v1.7.0/helm-kuberay-operator`).
 * - nvidia-device-plugin 0.18.0 (https://nvidia.github.io/k8s-device-plugin; NVIDIA/k8s-device-plugin PR #1464,
 *   listed by `helm search repo` in issue #1588). Its default affinity needs NFD labels or `nvidia.com/gpu.present`,
 *   which AL2023 nodes on Kubernetes < 1.35 lack, so it is pinned to our GPU role label instead.
 * - cluster-autoscaler 9.47.0 = Cluster Autoscaler 1.33.0 (https://kubernetes.github.io/autoscaler; kubernetes/autoscaler
 *   PR #8295), matching Kubernetes 1.33.
 */
import type { Environment } from "../config/stack";
import { ENVIRONMENT_PROFILES } from "../environments";
import { GPU_TAINT, POOL_LABEL, ROLE_LABEL } from "../pools";
import { ADDON_NAMESPACES } from "./namespaces";

/** A pinned Helm chart and the values we set. */
export interface HelmReleasePlan {
  readonly chart: string;
  readonly version: string;
  readonly repo: string;
  readonly namespace: string;
  readonly values: Readonly<Record<string, unknown>>;
}

/** The Helm charts the platform installs, pinned: name, version and repository of each. */
export const CHART_PINS = {
  kuberayOperator: { chart: "kuberay-operator", version: "1.7.0", repo: "https://ray-project.github.io/kuberay-helm/" },
  nvidiaDevicePlugin: {
    chart: "nvidia-device-plugin",
    version: "0.18.0",
    repo: "https://nvidia.github.io/k8s-device-plugin",
  },
  clusterAutoscaler: {
    chart: "cluster-autoscaler",
    version: "9.47.0",
    repo: "https://kubernetes.github.io/autoscaler",
  },
} as const;

/** Service account names the IAM roles are bound to (EKS Pod Identity). */
export const SERVICE_ACCOUNTS = {
  clusterAutoscaler: { namespace: ADDON_NAMESPACES.kubeSystem, name: "cluster-autoscaler" },
} as const;

/** EKS managed add-ons of a created cluster (versions: EKS's default for the cluster version). */
export const EKS_ADDONS = ["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"] as const;

/**
 * Configuration of the managed add-ons (`configurationValues`). The VPC CNI enforces NetworkPolicy only with its
 * network-policy agent on (the value is the string "true"; EKS user guide, "Restrict Pod network traffic with
 * Kubernetes network policies").
 */
export const EKS_ADDON_CONFIG: Readonly<Partial<Record<(typeof EKS_ADDONS)[number], object>>> = {
  "vpc-cni": { enableNetworkPolicy: "true" },
};

/**
 * KubeRay operator, on the CPU pool when one is named (`ray-gpu.io/pool`; leave it out on clusters whose nodes
 * lack that label); CRDs come with the chart. Every key exists in the chart's values.yaml.
 */
export function kuberayOperatorRelease(cpuPool?: string): HelmReleasePlan {
  return {
    ...CHART_PINS.kuberayOperator,
    namespace: ADDON_NAMESPACES.kuberayOperator,
    values: {
      ...(cpuPool ? { nodeSelector: { [POOL_LABEL]: cpuPool } } : {}),
      // Anecdotally 500 Ray pods need ~500 MB (chart comment); no CPU limit, so reconciles are never throttled.
      resources: { requests: { cpu: "100m", memory: "512Mi" }, limits: { memory: "1Gi" } },
    },
  };
}

/** NVIDIA device plugin: only on GPU nodes, tolerating their taint (the AL2023 NVIDIA AMI ships no plugin). */
export function nvidiaDevicePluginRelease(): HelmReleasePlan {
  return {
    ...CHART_PINS.nvidiaDevicePlugin,
    namespace: ADDON_NAMESPACES.kubeSystem,
    values: {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: ROLE_LABEL, operator: "In", values: ["gpu"] }] }],
          },
        },
      },
      tolerations: [
        { key: "CriticalAddonsOnly", operator: "Exists" },
        { key: GPU_TAINT.key, operator: "Exists", effect: GPU_TAINT.effect },
      ],
    },
  };
}

/** Cluster Autoscaler: discovers the node groups by tag, scales GPU pools from and back to zero. */
export function clusterAutoscalerRelease(args: {
  clusterName: string;
  region: string;
  environment: Environment;
  /** CPU pool to run on; leave it out on clusters whose nodes lack the pool label. @default - any node */
  cpuPool?: string | undefined;
}): HelmReleasePlan {
  const p = ENVIRONMENT_PROFILES[args.environment].platform;
  return {
    ...CHART_PINS.clusterAutoscaler,
    namespace: SERVICE_ACCOUNTS.clusterAutoscaler.namespace,
    values: {
      cloudProvider: "aws",
      awsRegion: args.region,
      autoDiscovery: { clusterName: args.clusterName },
      rbac: { serviceAccount: { create: true, name: SERVICE_ACCOUNTS.clusterAutoscaler.name } },
      ...(args.cpuPool ? { nodeSelector: { [POOL_LABEL]: args.cpuPool } } : {}),
      extraArgs: {
        "balance-similar-node-groups": true,
        expander: "least-waste",
        "scale-down-unneeded-time": p.scaleDownUnneededTime,
        "scale-down-delay-after-add": p.scaleDownDelayAfterAdd,
        // Ray's spill directory is an emptyDir: without this, GPU nodes running a job's pods would never scale down.
        "skip-nodes-with-local-storage": false,
      },
    },
  };
}

/** Cluster Autoscaler's IAM policy (its AWS README's recommended policy), writes limited to this cluster's groups. */
export function clusterAutoscalerPolicy(clusterName: string) {
  return {
    Version: "2012-10-17" as const,
    Statement: [
      {
        Sid: "Describe",
        Effect: "Allow" as const,
        Action: [
          "autoscaling:DescribeAutoScalingGroups",
          "autoscaling:DescribeAutoScalingInstances",
          "autoscaling:DescribeLaunchConfigurations",
          "autoscaling:DescribeScalingActivities",
          "ec2:DescribeImages",
          "ec2:DescribeInstanceTypes",
          "ec2:DescribeLaunchTemplateVersions",
          "ec2:GetInstanceTypesFromInstanceRequirements",
          "eks:DescribeNodegroup",
        ],
        Resource: "*",
      },
      {
        Sid: "ScaleOwnGroups",
        Effect: "Allow" as const,
        Action: ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
        Resource: "*",
        Condition: { StringEquals: { [`aws:ResourceTag/k8s.io/cluster-autoscaler/${clusterName}`]: "owned" } },
      },
    ],
  };
}
