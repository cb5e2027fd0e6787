/**
 * EKS managed node group plans for the CPU pool and the GPU pools (one group per instance type and capacity type): AMI
 * type (the accelerator's, ../catalog/accelerators.ts), capacity, labels and taints the RayJobs select on, IMDSv2, root
 * volume, instance-store NVMe for Ray spilling, placement, and the tags the Cluster Autoscaler needs to scale a pool up
 * from zero.
 *
 * Sources (shared/facts): `eks-gpu-amis.md` (AL2023_x86_64_NVIDIA ships the driver but not the device plugin),
 * `aws-g5.md` (nodeadm `spec.instance.localStorage.strategy: RAID0` mounts the NVMe array and bind-mounts the
 * kubelet and containerd directories onto it, so pod emptyDirs such as Ray's spill directory land on NVMe).
 * Cluster Autoscaler scale-from-zero tags: kubernetes/autoscaler `cluster-autoscaler/cloudprovider/aws/README.md`.
 * A spot-with-fallback pool gets two groups, spot and on-demand, told apart in the autoscaler's node templates by
 * {@link CAPACITY_TYPE_LABEL}: the AWS comparator (`processors/nodegroupset/aws_nodegroups.go`) does not ignore that
 * label, so `--balance-similar-node-groups` never splits a scale-up between them (`./spot-fallback.ts`).
 */
import { IMDS } from "./security";
import { EFA_RESOURCE, HUGEPAGE_MIB, HUGEPAGES_2MI_RESOURCE } from "../catalog/efa";
import { acceleratorOf, GPU_INSTANCES, type GpuInstanceType } from "../catalog/instances";
import { fallbackGroupName, spotGroupName } from "../config/platform";
import type { Environment } from "../config/stack";
import { capacityAllowed } from "../environments";
import { ACCELERATOR_LABEL_KEY, type CpuPoolPlan, type GpuPoolPlan, type Taint } from "../pools";

/** EKS's spelling of taint effects. */
const EKS_EFFECT = {
  NoSchedule: "NO_SCHEDULE",
  PreferNoSchedule: "PREFER_NO_SCHEDULE",
  NoExecute: "NO_EXECUTE",
} as const;

/** An EKS managed node group, planned. */
export interface NodeGroupPlan {
  /** The pool the group's nodes belong to (their `ray-gpu.io/pool` label). */
  readonly pool: string;
  /**
   * The group's name in the stack: the pool's, or `<pool>-spot` for the spot group of a spot-with-fallback pool (whose
   * on-demand group keeps the pool's name, so turning an on-demand pool into one replaces nothing). It names the
   * component (`<platform>-<name>`) and prefixes the EKS node group's name (`<name>-`).
   */
  readonly name: string;
  readonly role: "system" | "gpu";
  readonly amiType: "AL2023_x86_64_NVIDIA" | "AL2023_x86_64_STANDARD";
  readonly capacityType: "ON_DEMAND" | "SPOT";
  /** The group's one instance type (a pool with fallback sizes has a group per size). */
  readonly instanceTypes: readonly string[];
  readonly scaling: { readonly minSize: number; readonly maxSize: number; readonly desiredSize: number };
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly {
    readonly key: string;
    readonly value: string;
    readonly effect: "NO_SCHEDULE" | "PREFER_NO_SCHEDULE" | "NO_EXECUTE";
  }[];
  /** Launch template settings. */
  readonly launchTemplate: {
    readonly httpTokens: "required";
    readonly httpPutResponseHopLimit: number;
    readonly rootVolume: {
      readonly deviceName: "/dev/xvda";
      readonly sizeGiB: number;
      readonly type: "gp3";
      readonly iops: number;
      readonly throughputMiBps: number;
      readonly encrypted: true;
    };
    /** MIME multi-part user data with an AL2023 nodeadm NodeConfig; undefined when none is needed. */
    readonly userData: string | undefined;
  };
  /** Zone to pin the group to (its subnet), or undefined for all private subnets. */
  readonly availabilityZone: string | undefined;
  readonly clusterPlacementGroup: boolean;
  /**
   * The EFA interfaces the launch template attaches (network cards 0 to `interfaces - 1`), on an EFA pool; the group
   * then launches in one subnet, the first private subnet of its zone: EFA's OS-bypass traffic does not leave it.
   */
  readonly efa: { readonly interfaces: number } | undefined;
  /** Tags for the group's Auto Scaling group (Cluster Autoscaler discovery and scale-from-zero templates). */
  readonly autoscalerTags: Readonly<Record<string, string>>;
}

const USER_DATA_BOUNDARY = "RAY-GPU-BOUNDARY";

/** The NodeConfig part: RAID0 over the instance-store NVMe, with kubelet and containerd on it. */
const NVME_PART = [
  "Content-Type: application/node.eks.aws",
  "",
  "---",
  "apiVersion: node.eks.aws/v1alpha1",
  "kind: NodeConfig",
  "spec:",
  "  instance:",
  "    localStorage:",
  "      strategy: RAID0",
  "",
];

/**
 * A shell part that reserves 2 MiB hugepages for libfabric's EFA provider. cloud-init runs it (cloud-final) before
 * `nodeadm-run.service` starts the kubelet (`After=... cloud-final.service`), so the kubelet finds the pages and offers
 * them as `hugepages-2Mi`; the AMI itself reserves none.
 */
const hugepagesPart = (pages: number) => [
  'Content-Type: text/x-shellscript; charset="us-ascii"',
  "",
  "#!/bin/bash",
  "set -euo pipefail",
  `echo "vm.nr_hugepages = ${pages}" > /etc/sysctl.d/90-ray-gpu-efa-hugepages.conf`,
  `sysctl -w vm.nr_hugepages=${pages}`,
  "",
];

/**
 * MIME multi-part user data for AL2023: the nodeadm NodeConfig that RAID0s the instance-store NVMe and puts kubelet and
 * containerd on it, and on EFA nodes the part that reserves `hugepages` 2 MiB pages first.
 * @param hugepages - pages to reserve. @default 0 (none, no shell part)
 */
export function nvmeUserData(hugepages = 0): string {
  const parts = [...(hugepages > 0 ? [hugepagesPart(hugepages)] : []), NVME_PART];
  return [
    "MIME-Version: 1.0",
    `Content-Type: multipart/mixed; boundary="${USER_DATA_BOUNDARY}"`,
    "",
    ...parts.flatMap((p) => [`--${USER_DATA_BOUNDARY}`, ...p]),
    `--${USER_DATA_BOUNDARY}--`,
    "",
  ].join("\n");
}

/** What a node group's nodes will be, as the Cluster Autoscaler's scale-from-zero template tags say it. */
export interface NodeTemplate {
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  /** Extended resources each node offers, by name: its GPUs (`nvidia.com/gpu`), on EFA nodes the interfaces and hugepages. */
  readonly resources: Readonly<Record<string, string>>;
}

/**
 * Cluster Autoscaler tags: discovery, plus the node template's labels, taints and resources for scale from zero (a
 * pending pod that requests a resource no template offers never scales a group up from zero).
 */
export function autoscalerTags(clusterName: string, template: NodeTemplate): Record<string, string> {
  const tags: Record<string, string> = {
    "k8s.io/cluster-autoscaler/enabled": "true",
    [`k8s.io/cluster-autoscaler/${clusterName}`]: "owned",
  };
  for (const [k, v] of Object.entries(template.labels)) tags[`k8s.io/cluster-autoscaler/node-template/label/${k}`] = v;
  for (const t of template.taints)
    tags[`k8s.io/cluster-autoscaler/node-template/taint/${t.key}`] = `${t.value}:${t.effect}`;
  for (const [k, v] of Object.entries(template.resources))
    tags[`k8s.io/cluster-autoscaler/node-template/resources/${k}`] = v;
  return tags;
}

function rootVolume(sizeGiB: number) {
  return {
    deviceName: "/dev/xvda" as const,
    sizeGiB,
    type: "gp3" as const,
    iops: 3000,
    throughputMiBps: 250,
    encrypted: true as const,
  };
}

/**
 * IMDSv2 only, hop limit 1: pods cannot reach the instance metadata service, so they cannot take the node's role
 * (AWS EKS best practices, "Restrict access to the instance profile assigned to the worker node"). Host-network
 * agents (VPC CNI, the Pod Identity agent) still reach it; Ray pods use Pod Identity; the EBS CSI node plugin reads
 * its metadata from the Kubernetes node object when IMDS is out of reach.
 */
const HOP_LIMIT = IMDS.httpPutResponseHopLimit;

/** The cluster and environment a node group is planned for. */
export interface NodeGroupTarget {
  /** EKS cluster the group joins (its Cluster Autoscaler discovery tag). */
  readonly clusterName: string;
  /** Spot capacity is used only where the environment allows it. */
  readonly environment: Environment;
}

/** Plans the CPU pool's node group. */
export function planCpuNodeGroup(pool: CpuPoolPlan, target: Pick<NodeGroupTarget, "clusterName">): NodeGroupPlan {
  const { clusterName } = target;
  return {
    pool: pool.name,
    name: pool.name,
    role: "system",
    amiType: "AL2023_x86_64_STANDARD",
    capacityType: "ON_DEMAND",
    instanceTypes: [pool.instanceType],
    scaling: { minSize: pool.minNodes, maxSize: pool.maxNodes, desiredSize: pool.minNodes },
    labels: pool.labels,
    taints: [],
    launchTemplate: {
      httpTokens: "required",
      httpPutResponseHopLimit: HOP_LIMIT,
      rootVolume: rootVolume(100),
      userData: undefined,
    },
    availabilityZone: undefined,
    clusterPlacementGroup: false,
    efa: undefined,
    autoscalerTags: autoscalerTags(clusterName, { labels: pool.labels, taints: [], resources: {} }),
  };
}

/** One node group of a GPU pool: its name, instance type, capacity and the fewest nodes it keeps. */
interface GpuGroupSpec {
  readonly name: string;
  readonly instanceType: GpuInstanceType;
  readonly capacityType: NodeGroupPlan["capacityType"];
  readonly minSize: number;
  /** Put the capacity type in the autoscaler's node template (a fallback pool's two groups must not look alike). */
  readonly templateCapacityLabel: boolean;
}

/** EKS's label of a managed node's capacity type (`SPOT` or `ON_DEMAND`), which EKS sets on every node it launches. */
export const CAPACITY_TYPE_LABEL = "eks.amazonaws.com/capacityType";

/**
 * The capacity groups of one size: one, or for spot-with-fallback the spot group (preferred, at the pool's `minNodes`
 * for the pool's own size) and the on-demand group from 0 nodes (see `./spot-fallback.ts`). Spot alone is used only
 * where the environment allows it. A fallback size keeps no node of its own (`minSize` 0).
 */
function capacityGroups(pool: GpuPoolPlan, type: GpuInstanceType, environment: Environment): GpuGroupSpec[] {
  const first = type === pool.instanceType;
  const name = first ? pool.name : fallbackGroupName(pool.name, type);
  const minNodes = first ? pool.minNodes : 0;
  if (pool.capacityType === "spot-with-fallback")
    return [
      {
        name: spotGroupName(name),
        instanceType: type,
        capacityType: "SPOT",
        minSize: minNodes,
        templateCapacityLabel: true,
      },
      { name, instanceType: type, capacityType: "ON_DEMAND", minSize: 0, templateCapacityLabel: true },
    ];
  const spot = pool.capacityType === "spot" && capacityAllowed(environment, "spot");
  return [
    {
      name,
      instanceType: type,
      capacityType: spot ? "SPOT" : "ON_DEMAND",
      minSize: minNodes,
      templateCapacityLabel: false,
    },
  ];
}

/** The groups a pool needs: those of its own size, then those of each fallback size in order. */
function gpuGroupSpecs(pool: GpuPoolPlan, environment: Environment): GpuGroupSpec[] {
  return pool.instanceTypes.flatMap((t) => capacityGroups(pool, t, environment));
}

/** The extended resources a GPU group's nodes offer: their GPUs, and on an EFA pool each interface and the hugepages. */
function gpuResources(pool: GpuPoolPlan, type: GpuInstanceType): Record<string, string> {
  const spec = GPU_INSTANCES[type];
  const gpus = { "nvidia.com/gpu": String(spec.gpus) };
  if (!pool.efa) return gpus;
  return {
    ...gpus,
    [EFA_RESOURCE]: String(spec.efaInterfaces),
    [HUGEPAGES_2MI_RESOURCE]: `${pool.efa.nodeHugepagesMiB}Mi`,
  };
}

/** One node group of a GPU pool: its nodes carry the pool's labels and their own GPU's accelerator label. */
function gpuNodeGroup(pool: GpuPoolPlan, group: GpuGroupSpec, clusterName: string): NodeGroupPlan {
  const efaInterfaces = GPU_INSTANCES[group.instanceType].efaInterfaces;
  const accelerator = acceleratorOf(group.instanceType);
  const labels = { ...pool.labels, [ACCELERATOR_LABEL_KEY]: accelerator.nodeLabel };
  const template = group.templateCapacityLabel ? { ...labels, [CAPACITY_TYPE_LABEL]: group.capacityType } : labels;
  return {
    pool: pool.name,
    name: group.name,
    role: "gpu",
    amiType: accelerator.eksAmiType,
    capacityType: group.capacityType,
    instanceTypes: [group.instanceType],
    scaling: { minSize: group.minSize, maxSize: pool.maxNodes, desiredSize: group.minSize },
    labels,
    taints: pool.taints.map((t) => ({ key: t.key, value: t.value, effect: EKS_EFFECT[t.effect] })),
    launchTemplate: {
      httpTokens: "required",
      httpPutResponseHopLimit: HOP_LIMIT,
      rootVolume: rootVolume(pool.rootVolumeGiB),
      userData: nvmeUserData(pool.efa ? pool.efa.nodeHugepagesMiB / HUGEPAGE_MIB : 0),
    },
    availabilityZone: pool.availabilityZone,
    clusterPlacementGroup: pool.clusterPlacementGroup,
    efa: pool.efa ? { interfaces: efaInterfaces } : undefined,
    autoscalerTags: autoscalerTags(clusterName, {
      labels: template,
      taints: pool.taints,
      resources: gpuResources(pool, group.instanceType),
    }),
  };
}

/**
 * Plans a GPU pool's node groups: per instance type (its own, then each fallback), one group, or two for a
 * spot-with-fallback pool (spot, then on-demand). Each group holds up to `maxNodes`; the pool's queue quota keeps them
 * to `maxNodes` busy nodes together.
 */
export function planGpuNodeGroups(pool: GpuPoolPlan, target: NodeGroupTarget): NodeGroupPlan[] {
  return gpuGroupSpecs(pool, target.environment).map((g) => gpuNodeGroup(pool, g, target.clusterName));
}

/**
 * Plans a GPU pool's first node group: its only one, or the first of several (the spot group of a spot-with-fallback
 * pool; `planGpuNodeGroups` plans them all).
 */
export function planGpuNodeGroup(pool: GpuPoolPlan, target: NodeGroupTarget): NodeGroupPlan {
  return planGpuNodeGroups(pool, target)[0]!;
}
