/**
 * `GpuNodeGroup` and `CpuNodeGroup`: EKS managed node groups over the pure plans in
 * `core/platform/node-groups.ts` (AMI type, labels, taints, IMDSv2, root volume, NVMe for spilling, placement,
 * Cluster Autoscaler tags). Importable into an existing stack with an existing cluster.
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
}

type Child = { parent: pulumi.ComponentResource };

/** The launch template: IMDSv2 hop limit, the encrypted root volume, user data (NVMe setup), the placement group. */
function launchTemplate(name: string, p: NodeGroupPlan, child: Child): aws.ec2.LaunchTemplate {
  const placement = p.clusterPlacementGroup
    ? new aws.ec2.PlacementGroup(`${name}-placement`, { strategy: "cluster" }, child)
    : undefined;
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
      placement: placement ? { groupName: placement.name } : undefined,
      tagSpecifications: [{ resourceType: "instance", tags: { "ray-gpu.io/pool": p.pool } }],
    },
    child,
  );
}

/** The pool's subnets: the cluster's private ones, or those of its pinned zone. */
function poolSubnets(args: NodeGroupArgs, child: Child): pulumi.Input<string[]> {
  const p = args.plan;
  return p.availabilityZone
    ? aws.ec2.getSubnetsOutput(
        {
          filters: [
            { name: "vpc-id", values: [args.vpcId] },
            { name: "availability-zone", values: [p.availabilityZone] },
            { name: "map-public-ip-on-launch", values: ["false"] },
          ],
        },
        child,
      ).ids
    : args.subnetIds;
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
function createNodeGroup(name: string, args: NodeGroupArgs, parent: pulumi.ComponentResource): aws.eks.NodeGroup {
  const p = args.plan;
  const child = { parent };
  const template = launchTemplate(name, p, child);
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
  return group;
}

/** One node group of a GPU pool (g5, g6 or g6e): a pool has one per instance type and capacity type. */
export class GpuNodeGroup extends pulumi.ComponentResource {
  /** Name of the EKS managed node group. */
  public readonly nodeGroupName: pulumi.Output<string>;
  /** Labels RayJob workers select on, and the taint they must tolerate. */
  public readonly labels: Readonly<Record<string, string>>;
  public readonly taints: NodeGroupPlan["taints"];

  constructor(name: string, args: NodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:GpuNodeGroup", name, {}, opts);
    if (args.plan.role !== "gpu")
      throw new Error(`GpuNodeGroup ${name} needs a GPU pool plan (planGpuNodeGroups), got role ${args.plan.role}`);
    this.nodeGroupName = createNodeGroup(name, args, this).nodeGroupName;
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
    this.nodeGroupName = createNodeGroup(name, args, this).nodeGroupName;
    this.registerOutputs({ nodeGroupName: this.nodeGroupName });
  }
}
