/**
 * `RayGpuPlatform`: the whole platform from the typed stack config: network (new clusters), EKS (new or
 * adopted), the CPU pool and the A10G pools, the NVIDIA device plugin, the Cluster Autoscaler, the KubeRay
 * operator and storage. Exposes what workloads need: pool labels and taints, the service account, the bucket,
 * the operator and the Kubernetes provider.
 */
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../core/config/stack";
import { planPlatform, type PlatformPlan } from "../core/platform/plan";
import type { NodeGroupPlan } from "../core/platform/node-groups";
import { ClusterAutoscaler, KubeRayOperator, NvidiaDevicePlugin } from "./addons";
import { EksCluster } from "./cluster";
import { Network } from "./network";
import { CpuNodeGroup, GpuNodeGroup } from "./node-group";
import { Storage } from "./storage";

export interface RayGpuPlatformArgs {
  /** The validated stack config (`parseStackConfig`). */
  readonly config: StackConfig;
}

export class RayGpuPlatform extends pulumi.ComponentResource {
  /** The pure plan the platform was built from (pools with their labels and taints, chart pins, …). */
  public readonly plan: PlatformPlan;
  public readonly clusterName: pulumi.Output<string>;
  public readonly provider: k8s.Provider;
  public readonly kuberayOperator: KubeRayOperator;
  public readonly gpuNodeGroups: readonly GpuNodeGroup[];
  public readonly storage: Storage;
  /** Service account the Ray pods run as. */
  public readonly serviceAccountName: string;
  public readonly bucketName: pulumi.Output<string>;

  constructor(name: string, args: RayGpuPlatformArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:RayGpuPlatform", name, {}, opts);
    const plan = planPlatform(args.config);
    const child = { parent: this };
    const network = plan.network ? new Network(`${name}-network`, { plan: plan.network }, child) : undefined;
    const cluster = new EksCluster(
      `${name}-cluster`,
      {
        cluster: plan.cluster,
        region: plan.region,
        privateSubnetIds: network?.privateSubnetIds,
        publicSubnetIds: network?.publicSubnetIds,
      },
      child,
    );
    const groupArgs = (p: NodeGroupPlan) => ({
      plan: p,
      clusterName: cluster.clusterName,
      nodeRoleArn: cluster.nodeRoleArn,
      subnetIds: cluster.nodeSubnetIds,
      vpcId: cluster.vpcId,
    });
    const cpu = new CpuNodeGroup(`${name}-${plan.nodeGroups.cpu.pool}`, groupArgs(plan.nodeGroups.cpu), {
      ...child,
      dependsOn: cluster.ready,
    });
    this.gpuNodeGroups = plan.nodeGroups.gpu.map(
      (p) => new GpuNodeGroup(`${name}-${p.pool}`, groupArgs(p), { ...child, dependsOn: cluster.ready }),
    );
    const inCluster = { provider: cluster.provider, dependsOn: [...cluster.ready, cpu] };
    new NvidiaDevicePlugin(
      `${name}-nvidia-device-plugin`,
      { release: plan.helm.nvidiaDevicePlugin, ...inCluster },
      child,
    );
    new ClusterAutoscaler(
      `${name}-cluster-autoscaler`,
      {
        release: plan.helm.clusterAutoscaler,
        clusterName: cluster.clusterName,
        plannedClusterName: plan.cluster.name,
        ...inCluster,
      },
      child,
    );
    this.kuberayOperator = new KubeRayOperator(
      `${name}-kuberay`,
      { release: plan.helm.kuberayOperator, ...inCluster },
      child,
    );
    this.storage = new Storage(
      `${name}-storage`,
      {
        plan: plan.storage,
        clusterName: cluster.clusterName,
        provider: cluster.provider,
        dependsOn: inCluster.dependsOn,
        fsxSubnetId: cluster.nodeSubnetIds.apply((ids) => ids[0] ?? ""),
        vpcId: cluster.vpcId,
      },
      child,
    );
    this.plan = plan;
    this.clusterName = cluster.clusterName;
    this.provider = cluster.provider;
    this.serviceAccountName = this.storage.serviceAccountName;
    this.bucketName = this.storage.bucketName;
    this.registerOutputs({ clusterName: this.clusterName, bucketName: this.bucketName });
  }
}
