/**
 * Cluster add-ons: pinned Helm charts (NVIDIA device plugin, Cluster Autoscaler, KubeRay operator) with their
 * values, and the EKS managed add-ons. Values are plain objects, serialized with sorted keys by the components.
 *
 * Pins and sources:
 * - kuberay-operator 1.7.0 (https://ray-project.github.io/kuberay-helm/; `shared/kuberay/v1.7.0/helm-kuberay-operator`).
 * - nvidia-device-plugin 0.18.0 (https://nvidia.github.io/k8s-device-plugin; NVIDIA/k8s-device-plugin PR #1464,
 *   listed by `helm search repo` in issue #1588). Its default affinity needs NFD labels or `nvidia.com/gpu.present`,
 *   which AL2023 nodes on Kubernetes < 1.35 lack, so it is pinned to our GPU role label instead.
 * - aws-efa-k8s-device-plugin v0.5.30, image v0.5.20 (aws/eks-charts@52396092 `stable/aws-efa-k8s-device-plugin`;
 *   its index lists the `v`-prefixed version). Its DaemonSet requires an instance type of `supportedInstanceLabels`
 *   (every g5 size with EFA is in the chart's list) and tolerates only `CriticalAddonsOnly` unless told more.
 * - cluster-autoscaler chart 9.59.0 (https://kubernetes.github.io/autoscaler; kubernetes/autoscaler tag
 *   cluster-autoscaler-chart-9.59.0, commit 5a0b98e), its image set to the Cluster Autoscaler release of the cluster's
 *   Kubernetes minor ({@link CLUSTER_AUTOSCALER_IMAGES}); the chart's own default is 1.35.0.
 */
import type { Environment } from "../config/stack";
import { ENVIRONMENT_PROFILES } from "../environments";
import type { EksKubernetesVersion } from "../catalog/eks-versions";
import { EFA_INSTANCE_TYPES } from "../catalog/instances";
import { EFA_LABEL, GPU_TAINT, INSTANCE_TYPE_LABEL, POOL_LABEL, ROLE_LABEL } from "../pools";
import { ADDON_NAMESPACES } from "./namespaces";
import { spotFallbackValues, type SpotFallbackPlan } from "./spot-fallback";

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
    version: "9.59.0",
    repo: "https://kubernetes.github.io/autoscaler",
  },
  efaDevicePlugin: {
    chart: "aws-efa-k8s-device-plugin",
    version: "v0.5.30",
    repo: "https://aws.github.io/eks-charts",
  },
} as const;

/**
 * The Cluster Autoscaler image tag for each Kubernetes minor EKS runs: the latest patch of the matching minor. The
 * autoscaler's README: "we recommend that users always use the latest Cluster Autoscaler release that corresponds
 * to the minor version of Kubernetes that their cluster is running" (its scheduler code is that minor's). Tags:
 * kubernetes/autoscaler `cluster-autoscaler-1.<minor>.<patch>` (1.36.1 of 2026-07-22, and so on).
 */
export const CLUSTER_AUTOSCALER_IMAGES = {
  "1.30": "v1.30.7",
  "1.31": "v1.31.5",
  "1.32": "v1.32.7",
  "1.33": "v1.33.6",
  "1.34": "v1.34.5",
  "1.35": "v1.35.2",
  "1.36": "v1.36.1",
} as const satisfies Readonly<Record<EksKubernetesVersion, string>>;

/** The autoscaler image tag for a cluster's Kubernetes minor, or undefined when none is pinned for it. */
export function clusterAutoscalerImageTag(kubernetesVersion: string | undefined): string | undefined {
  return (CLUSTER_AUTOSCALER_IMAGES as Readonly<Record<string, string>>)[kubernetesVersion ?? ""];
}

/** Service account names the IAM roles are bound to (EKS Pod Identity). */
export const SERVICE_ACCOUNTS = {
  clusterAutoscaler: { namespace: ADDON_NAMESPACES.kubeSystem, name: "cluster-autoscaler" },
} as const;

/** When a managed add-on may be created: with the control plane, or once the CPU node group has nodes. */
export type AddonStage = "beforeNodes" | "afterCpuNodes";

/** A managed add-on of a created cluster: what it runs, and so when its create can finish. */
export interface EksAddonPlan {
  /** `DaemonSet`: ACTIVE with no node (nothing to run); `Deployment`: ACTIVE only once its pods run on a node. */
  readonly runs: "DaemonSet" | "Deployment";
  readonly stage: AddonStage;
  readonly source: string;
}

/**
 * EKS managed add-ons of a created cluster (versions: EKS's default for the cluster version), in the order that lets
 * the first `pulumi up` finish. The AWS provider's add-on create waits for ACTIVE (20 minutes, then fails); a
 * Deployment add-on stays DEGRADED while no node can run its pods. Node groups therefore wait for the DaemonSet
 * add-ons only, and CoreDNS waits for the CPU node group (pulumi/pulumi-eks#1819 and #1525,
 * terraform-aws-modules/terraform-aws-eks#3001, eksctl PR #5458).
 */
export const EKS_ADDONS = {
  "vpc-cni": { runs: "DaemonSet", stage: "beforeNodes", source: "aws-node DaemonSet: the pod network nodes need" },
  "kube-proxy": { runs: "DaemonSet", stage: "beforeNodes", source: "kube-proxy DaemonSet" },
  "eks-pod-identity-agent": {
    runs: "DaemonSet",
    stage: "beforeNodes",
    source: "eks-pod-identity-agent DaemonSet: pods' AWS credentials, needed from the first pod on",
  },
  coredns: {
    runs: "Deployment",
    stage: "afterCpuNodes",
    source: "coredns Deployment, 2 replicas: DEGRADED until a node runs them (EKS user guide, Manage CoreDNS)",
  },
} as const satisfies Readonly<Record<string, EksAddonPlan>>;

/** Name of an EKS managed add-on the platform creates. */
export type EksAddonName = keyof typeof EKS_ADDONS;

/** The managed add-ons of one stage, in table order. */
export const addonsOfStage = (stage: AddonStage): EksAddonName[] =>
  (Object.keys(EKS_ADDONS) as EksAddonName[]).filter((a) => EKS_ADDONS[a].stage === stage);

/**
 * Configuration of the managed add-ons (`configurationValues`). The VPC CNI enforces NetworkPolicy only with its
 * network-policy agent on (the value is the string "true"; EKS user guide, "Restrict Pod network traffic with
 * Kubernetes network policies").
 */
export const EKS_ADDON_CONFIG: Readonly<Partial<Record<EksAddonName, object>>> = {
  "vpc-cni": { enableNetworkPolicy: "true" },
};

/**
 * KubeRay operator, on the CPU pool when one is named (`ray-gpu.io/pool`; leave it out on clusters whose nodes
 * lack that label); CRDs come with the chart. With `watchNamespaces` it is a single-namespace install: the chart's
 * `singleNamespaceInstall` swaps its ClusterRole (Pods, Services and Secrets of every namespace) for one Role per
 * watched namespace, and `watchNamespace` passes `--watch-namespace` (chart 1.7.0 templates/role.yaml,
 * multiple_namespaces_role.yaml, deployment.yaml). Each watched namespace must exist before the release. Every key
 * exists in the chart's values.yaml (`watchNamespace` as its documented comment).
 * @param cpuPool - the CPU pool to run on. @default - any node
 * @param watchNamespaces - the namespaces whose RayJobs it reconciles. @default - every namespace (a ClusterRole)
 */
export function kuberayOperatorRelease(cpuPool?: string, watchNamespaces?: readonly string[]): HelmReleasePlan {
  return {
    ...CHART_PINS.kuberayOperator,
    namespace: ADDON_NAMESPACES.kuberayOperator,
    values: {
      ...(cpuPool ? { nodeSelector: { [POOL_LABEL]: cpuPool } } : {}),
      ...(watchNamespaces?.length ? { singleNamespaceInstall: true, watchNamespace: [...watchNamespaces] } : {}),
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

/**
 * The EFA device plugin: on the EFA pools' nodes only (their `ray-gpu.io/efa` label), tolerating the GPU taint, for
 * every size of the catalog that has EFA; it advertises `vpc.amazonaws.com/efa`, which an EFA job's workers request.
 * Installed only where a pool sets `efa: true`.
 */
export function efaDevicePluginRelease(): HelmReleasePlan {
  return {
    ...CHART_PINS.efaDevicePlugin,
    namespace: ADDON_NAMESPACES.kubeSystem,
    values: {
      nodeSelector: { [EFA_LABEL]: "true" },
      supportedInstanceLabels: { keys: [INSTANCE_TYPE_LABEL], values: [...EFA_INSTANCE_TYPES] },
      tolerations: [{ key: GPU_TAINT.key, operator: "Exists", effect: GPU_TAINT.effect }],
    },
  };
}

/**
 * Cluster Autoscaler: discovers the node groups by tag, scales GPU pools from and back to zero, and with
 * spot-with-fallback pools prefers their spot groups (`./spot-fallback.ts`).
 */
export function clusterAutoscalerRelease(args: {
  clusterName: string;
  region: string;
  environment: Environment;
  /** CPU pool to run on; leave it out on clusters whose nodes lack the pool label. @default - any node */
  cpuPool?: string | undefined;
  /**
   * The cluster's Kubernetes minor: the image is the autoscaler release of that minor.
   * @default - unknown (an adopted cluster before deploy): the chart's default image
   */
  kubernetesVersion?: string | undefined;
  /**
   * The stack's spot-with-fallback pools: prefer their spot groups, give up on a spot node after the wait.
   * @default - none: the autoscaler's least-waste expander and its 15-minute provision time
   */
  spotFallback?: SpotFallbackPlan | undefined;
}): HelmReleasePlan {
  const p = ENVIRONMENT_PROFILES[args.environment].platform;
  const tag = clusterAutoscalerImageTag(args.kubernetesVersion);
  const fallback = args.spotFallback ? spotFallbackValues(args.spotFallback) : undefined;
  return {
    ...CHART_PINS.clusterAutoscaler,
    namespace: SERVICE_ACCOUNTS.clusterAutoscaler.namespace,
    values: {
      ...(tag ? { image: { tag } } : {}),
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
        ...fallback?.extraArgs,
      },
      ...(fallback ? { expanderPriorities: fallback.expanderPriorities } : {}),
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
