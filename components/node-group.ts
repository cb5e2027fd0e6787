/**
 * `GpuNodeGroup` and `CpuNodeGroup`: EKS managed node groups over the pure plans in
 * `core/platform/node-groups.ts` (AMI type, labels, taints, IMDSv2, root volume, NVMe for spilling, placement, EFA
 * interfaces and their security group, Cluster Autoscaler tags). Importable into an existing stack with an existing
 * cluster.
 */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import type { NodeGroupPlan } from "../core/platform/node-groups";

/** Arguments of `GpuNodeGroup` and `CpuNodeGroup`: the planned group and the cluster it joins. */
export interface NodeGroupArgs {
  /** From `planGpuNodeGroups(...)` (one component per group) / `planCpuNodeGroup(...)`. */
  readonly plan: NodeGroupPlan;
  readonly clusterName: pulumi.Input<string>;
  readonly nodeRoleArn: pulumi.Input<string>;
  /** Private subnets of the cluster's VPC. */
  readonly subnetIds: pulumi.Input<string[]>;
  /** VPC of the subnets (to find the subnet of a pinned zone). */
  readonly vpcId: pulumi.Input<string>;
  /**
   * The cluster's security group (`EksCluster.clusterSecurityGroupId`): an EFA group's interfaces list it beside the
   * EFA group, since EKS adds it only to launch templates that name no security group. Required for an EFA plan.
   * @default - none (groups without EFA take EKS's default)
   */
  readonly clusterSecurityGroupId?: pulumi.Input<string>;
  /**
   * The pool's cluster placement group, shared by all its groups so that a job's nodes never straddle two.
   * @default - the group makes its own when its plan asks for one
   */
  readonly placementGroupName?: pulumi.Input<string>;
  /**
   * The pool's EFA security group ({@link efaSecurityGroup}), shared by all its groups.
   * @default - the group makes its own when its plan has EFA
   */
  readonly efaSecurityGroupId?: pulumi.Input<string>;
}

type Child = { parent: pulumi.Resource };

/** A cluster placement group: the nodes launched in it share one low-latency segment of one zone. */
export const clusterPlacementGroup = (name: string, child: Child) =>
  new aws.ec2.PlacementGroup(`${name}-placement`, { strategy: "cluster" }, child);

/**
 * The security group EFA needs: all traffic to and from the group itself, in and out (EC2 user guide, "Prepare an
 * EFA-enabled security group"; terraform-aws-eks and eksctl add the same two rules).
 */
export function efaSecurityGroup(name: string, vpcId: pulumi.Input<string>, child: Child): aws.ec2.SecurityGroup {
  const group = new aws.ec2.SecurityGroup(
    `${name}-efa`,
    { vpcId, description: "EFA: all traffic between the pool's nodes", tags: { "ray-gpu.io/efa": "true" } },
    child,
  );
  const self = { securityGroupId: group.id, ipProtocol: "-1", referencedSecurityGroupId: group.id };
  new aws.vpc.SecurityGroupIngressRule(`${name}-efa-in`, { ...self, description: "EFA from the group" }, child);
  new aws.vpc.SecurityGroupEgressRule(`${name}-efa-out`, { ...self, description: "EFA to the group" }, child);
  return group;
}

/** What a pool's node groups share: its placement group and its EFA security group, made by its first group. */
export interface PoolShared {
  readonly placementGroupName: pulumi.Input<string> | undefined;
  readonly efaSecurityGroupId: pulumi.Input<string> | undefined;
}

/** The group's placement group and EFA security group: those given, else its own where its plan needs them. */
function sharedOf(name: string, args: NodeGroupArgs, child: Child): PoolShared {
  const p = args.plan;
  return {
    placementGroupName: p.clusterPlacementGroup
      ? (args.placementGroupName ?? clusterPlacementGroup(name, child).name)
      : undefined,
    efaSecurityGroupId: p.efa ? (args.efaSecurityGroupId ?? efaSecurityGroup(name, args.vpcId, child).id) : undefined,
  };
}

/**
 * An EFA group's network interfaces: the primary on card 0 (device 0), one more per network card (device 1), each of
 * type `efa`, in the cluster's and the EFA security group; no subnet (EKS puts the node group's).
 */
function efaInterfaces(name: string, args: NodeGroupArgs, shared: PoolShared, interfaces: number) {
  const clusterGroup = args.clusterSecurityGroupId;
  if (clusterGroup === undefined)
    throw new Error(
      `GpuNodeGroup ${name}: an EFA node group needs clusterSecurityGroupId (EksCluster.clusterSecurityGroupId): ` +
        `its interfaces name their security groups, so EKS does not add the cluster's`,
    );
  return Array.from({ length: interfaces }, (_, i) => ({
    deviceIndex: i === 0 ? 0 : 1,
    networkCardIndex: i,
    interfaceType: "efa",
    deleteOnTermination: "true",
    securityGroups: [clusterGroup, shared.efaSecurityGroupId!],
  }));
}

/**
 * The launch template: IMDSv2 hop limit, the encrypted root volume, user data (NVMe setup, EFA's hugepages), the
 * placement group, and an EFA group's interfaces.
 */
function launchTemplate(name: string, args: NodeGroupArgs, shared: PoolShared, child: Child): aws.ec2.LaunchTemplate {
  const p = args.plan;
  const lt = p.launchTemplate;
  return new aws.ec2.LaunchTemplate(
    `${name}-lt`,
    {
      metadataOptions: {
        httpTokens: lt.httpTokens,
        httpEndpoint: "enabled",
        httpPutResponseHopLimit: lt.httpPutResponseHopLimit,
      },
      blockDeviceMappings: [
        {
          deviceName: lt.rootVolume.deviceName,
          ebs: {
            volumeSize: lt.rootVolume.sizeGiB,
            volumeType: lt.rootVolume.type,
            iops: lt.rootVolume.iops,
            throughput: lt.rootVolume.throughputMiBps,
            encrypted: "true",
            deleteOnTermination: "true",
          },
        },
      ],
      userData: lt.userData === undefined ? undefined : Buffer.from(lt.userData).toString("base64"),
      placement: shared.placementGroupName ? { groupName: shared.placementGroupName } : undefined,
      networkInterfaces: p.efa ? efaInterfaces(name, args, shared, p.efa.interfaces) : undefined,
      tagSpecifications: [{ resourceType: "instance", tags: { "ray-gpu.io/pool": p.pool } }],
    },
    child,
  );
}

/**
 * The pool's subnets: the cluster's private ones, or those of its pinned zone; an EFA group only the first of them by
 * ID (EFA's OS-bypass traffic does not cross subnets, so every group of the pool must land in the same one).
 */
function poolSubnets(args: NodeGroupArgs, child: Child): pulumi.Input<string[]> {
  const p = args.plan;
  if (!p.availabilityZone) return args.subnetIds;
  const ids = aws.ec2.getSubnetsOutput(
    {
      filters: [
        { name: "vpc-id", values: [args.vpcId] },
        { name: "availability-zone", values: [p.availabilityZone] },
        { name: "map-public-ip-on-launch", values: ["false"] },
      ],
    },
    child,
  ).ids;
  return p.efa ? ids.apply((all) => [...all].sort().slice(0, 1)) : ids;
}

/** EKS does not copy node group tags to the Auto Scaling group; the Cluster Autoscaler reads them there. */
function tagAutoscalingGroup(name: string, group: aws.eks.NodeGroup, p: NodeGroupPlan, child: Child): void {
  const asgName = group.resources.apply((r) => r?.[0]?.autoscalingGroups?.[0]?.name ?? "");
  for (const [key, value] of Object.entries(p.autoscalerTags)) {
    const slug = key.replace(/^k8s\.io\/cluster-autoscaler\//, "").replace(/[^A-Za-z0-9]+/g, "-");
    new aws.autoscaling.Tag(
      `${name}-asg-${slug}`,
      { autoscalingGroupName: asgName, tag: { key, value, propagateAtLaunch: false } },
      child,
    );
  }
}

/** Shared by both pool kinds; children are parented to `parent` and named `${name}-<role>`. */
function createNodeGroup(
  name: string,
  args: NodeGroupArgs,
  parent: pulumi.ComponentResource,
): { group: aws.eks.NodeGroup; shared: PoolShared } {
  const p = args.plan;
  const child = { parent };
  const shared = sharedOf(name, args, child);
  const template = launchTemplate(name, args, shared, child);
  const subnetIds = poolSubnets(args, child);
  const group = new aws.eks.NodeGroup(
    `${name}-ng`,
    {
      clusterName: args.clusterName,
      nodeGroupNamePrefix: `${p.name}-`,
      nodeRoleArn: args.nodeRoleArn,
      subnetIds,
      amiType: p.amiType,
      capacityType: p.capacityType,
      instanceTypes: [...p.instanceTypes],
      scalingConfig: { ...p.scaling },
      labels: { ...p.labels },
      taints: p.taints.map((t) => ({ ...t })),
      launchTemplate: { id: template.id, version: pulumi.interpolate`${template.latestVersion}` },
      tags: { ...p.autoscalerTags },
    },
    // The autoscaler owns the desired size once the group exists.
    { ...child, ignoreChanges: ["scalingConfig.desiredSize"] },
  );
  tagAutoscalingGroup(name, group, p, child);
  return { group, shared };
}

/** One node group of a GPU pool (g5, g6 or g6e): a pool has one per instance type and capacity type. */
export class GpuNodeGroup extends pulumi.ComponentResource {
  /** Name of the EKS managed node group. */
  public readonly nodeGroupName: pulumi.Output<string>;
  /** Labels RayJob workers select on, and the taint they must tolerate. */
  public readonly labels: Readonly<Record<string, string>>;
  public readonly taints: NodeGroupPlan["taints"];
  /**
   * The placement group and EFA security group its nodes use (made here or given): pass them to the pool's other
   * groups (`placementGroupName`, `efaSecurityGroupId`) so the pool's nodes share them.
   */
  public readonly shared: PoolShared;

  constructor(name: string, args: NodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:GpuNodeGroup", name, {}, opts);
    if (args.plan.role !== "gpu")
      throw new Error(`GpuNodeGroup ${name} needs a GPU pool plan (planGpuNodeGroups), got role ${args.plan.role}`);
    const { group, shared } = createNodeGroup(name, args, this);
    this.nodeGroupName = group.nodeGroupName;
    this.shared = shared;
    this.labels = args.plan.labels;
    this.taints = args.plan.taints;
    this.registerOutputs({ nodeGroupName: this.nodeGroupName });
  }
}

/** The CPU pool for Ray heads, the operator and system pods. */
export class CpuNodeGroup extends pulumi.ComponentResource {
  public readonly nodeGroupName: pulumi.Output<string>;

  constructor(name: string, args: NodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:CpuNodeGroup", name, {}, opts);
    this.nodeGroupName = createNodeGroup(name, args, this).group.nodeGroupName;
    this.registerOutputs({ nodeGroupName: this.nodeGroupName });
  }
}
