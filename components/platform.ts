/**
 * `RayGpuPlatform`: the whole platform from the typed stack config: network (new clusters), EKS (new or
 * adopted), the CPU pool and the GPU pools, the NVIDIA device plugin, the Cluster Autoscaler, the KubeRay
 * operator and storage. Exposes what workloads need: pool labels and taints, the service account, the bucket,
 * the operator and the Kubernetes provider.
 */
import type * as k8s from "@pulumi/kubernetes";
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { parseStackConfig, type StackConfigInput } from "../core/config/stack";
import { planPlatform, type PlatformPlan } from "../core/platform-plan";
import type { NodeGroupPlan } from "../core/platform/node-groups";
import { ClusterAutoscaler, EfaDevicePlugin, KubeRayOperator, NvidiaDevicePlugin } from "./addons";
import { JobQueue } from "./queueing";
import { EksCluster } from "./cluster";
import { Network } from "./network";
import { CpuNodeGroup, GpuNodeGroup, type PoolShared } from "./node-group";
import { Storage } from "./storage";
import { RayGpuRuntime } from "./ray-workload";
import type { RuntimePackage } from "../workloads/contract/configmaps";
import { keptOptions, nameChecks, planOrRunError, type OrderingSource } from "./child-options";
import { firstOf } from "./outputs";
import { WorkloadSecurity } from "./security";
import { GpuObservability } from "./observability";

/** Arguments of {@link RayGpuPlatform}. */
export interface RayGpuPlatformArgs {
  /** The stack's settings (the keys under `ray-gpu:`), validated here: every problem is reported at once. */
  readonly config: StackConfigInput;
  /**
   * The runtime package jobs mount.
   * @default - this installation's package (`loadRuntimePackage()`)
   */
  readonly runtime?: RuntimePackage;
}

/**
 * The whole platform from the typed stack config. Pass an AWS provider for the region in the resource options
 * (`{ providers: [awsProvider] }`); the platform makes its own Kubernetes provider for the cluster.
 */
export class RayGpuPlatform extends pulumi.ComponentResource implements OrderingSource {
  /** The pure plan the platform was built from (pools with their labels and taints, chart pins, …). */
  public readonly plan: PlatformPlan;
  /** Name of the EKS cluster. */
  public readonly clusterName: pulumi.Output<string>;
  /** Kubeconfig of the cluster (authenticates with `aws eks get-token`), as a secret. */
  public readonly kubeconfig: pulumi.Output<string>;
  /** Kubernetes provider of the cluster; pass it to a RayWorkload's resource options. */
  public readonly provider: k8s.Provider;
  /** The KubeRay operator; RayWorkloads depend on it. */
  public readonly kuberayOperator: KubeRayOperator;
  /** Kueue and the stack's queue, when `queueing.enabled`; RayJobs wait in it for their pool's quota. */
  public readonly queue: JobQueue | undefined;
  /** The GPU node groups, in config order (per pool, each size in order, a spot group before its on-demand twin). */
  public readonly gpuNodeGroups: readonly GpuNodeGroup[];
  /** The bucket, the workload namespace and the Ray pods' service account. */
  public readonly storage: Storage;
  /** Namespace the RayJobs run in. */
  public readonly workloadNamespace: string;
  /** Service account the Ray pods run as. */
  public readonly serviceAccountName: string;
  /** Name of the bucket for datasets, checkpoints and results. */
  public readonly bucketName: pulumi.Output<string>;
  /** IAM role the Ray pods assume (Pod Identity), allowed to use only the bucket. */
  public readonly podRoleArn: pulumi.Output<string>;
  /** The runtime package's ConfigMap in the workload namespace, which every job mounts. */
  public readonly runtime: RayGpuRuntime;
  /** The Ray token Secret and the NetworkPolicies of the workload namespace. */
  public readonly security: WorkloadSecurity;
  /** DCGM exporter, Prometheus, Grafana, the Ray PodMonitor, rules and dashboard, when `observability.enabled`. */
  public readonly observability: GpuObservability | undefined;
  /** What an in-cluster add-on waits for: the cluster, the CPU nodes and CoreDNS (see {@link addonOptions}). */
  private readonly addonOrdering: pulumi.ComponentResourceOptions;

  constructor(name: string, args: RayGpuPlatformArgs, opts?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(opts);
    super("ray-gpu:index:RayGpuPlatform", name, {}, names.opts);
    names.own(this);
    const plan = planOrRunError("RayGpuPlatform", () =>
      planPlatform(parseStackConfig(args.config, "RayGpuPlatform config")),
    );
    const key = this.dataKey(name, plan);
    const cluster = this.cluster(name, plan, key);
    const { gpu, inCluster } = this.nodeGroups(name, plan, cluster);
    this.addonOrdering = { providers: inCluster.providers, dependsOn: inCluster.dependsOn };
    this.gpuNodeGroups = gpu;
    const fsx = { fsxSubnetId: firstOf(cluster.nodeSubnetIds, ""), vpcId: cluster.vpcId };
    const keyUsers = cluster.clusterRoleArn ? [cluster.clusterRoleArn] : [];
    const keyArgs = { kmsKeyArn: key.arn, kmsKeyId: key.keyId, keyUserRoleArns: keyUsers };
    const storage = { plan: plan.storage, clusterName: cluster.clusterName, ...keyArgs, ...fsx };
    this.storage = new Storage(`${name}-storage`, { ...storage, protect: plan.security.protectData }, inCluster);
    // The operator's Role lands in the workload namespace (a single-namespace install), so it waits for it.
    const withNamespace = { ...inCluster, dependsOn: [...inCluster.dependsOn, this.storage.namespace] };
    this.kuberayOperator = this.clusterAddons(name, plan, cluster, { inCluster, withNamespace });
    const inNamespace = { ...inCluster, dependsOn: [this.storage.namespace] };
    this.runtime = new RayGpuRuntime(
      `${name}-runtime`,
      { namespace: plan.workloadNamespace, runtime: args.runtime },
      inNamespace,
    );
    this.queue = this.jobQueue(name, plan, inNamespace);
    this.security = new WorkloadSecurity(
      `${name}-security`,
      { namespace: plan.workloadNamespace, egress: { httpsCidrs: plan.security.httpsEgressCidrs } },
      inNamespace,
    );
    this.observability = this.monitoring(name, plan, cluster.clusterName, inNamespace);
    this.plan = plan;
    this.clusterName = cluster.clusterName;
    this.kubeconfig = cluster.kubeconfig;
    this.provider = cluster.provider;
    this.workloadNamespace = plan.workloadNamespace;
    this.serviceAccountName = this.storage.serviceAccountName;
    this.bucketName = this.storage.bucketName;
    this.podRoleArn = this.storage.roleArn;
    // Every child's name against its limit (Helm's 53 characters, AWS's), for the name this platform was given.
    names.report(`RayGpuPlatform ${name}`);
    this.registerOutputs({ clusterName: this.clusterName, bucketName: this.bucketName, podRoleArn: this.podRoleArn });
  }

  /** The KMS key of the bucket's objects and the cluster's Secrets (kept on delete when data is protected). */
  private dataKey(name: string, plan: PlatformPlan): aws.kms.Key {
    return new aws.kms.Key(
      `${name}-key`,
      {
        description: `pulumi-ray-gpu ${plan.environment}: the bucket's objects and the cluster's Kubernetes Secrets`,
        enableKeyRotation: true,
        deletionWindowInDays: plan.security.kmsDeletionWindowDays,
      },
      { parent: this, ...keptOptions(plan.security.protectData) },
    );
  }

  /** The network (when the plan makes one) and the cluster in it. */
  private cluster(name: string, plan: PlatformPlan, key: aws.kms.Key): EksCluster {
    const child = { parent: this };
    const network = plan.network ? new Network(`${name}-network`, { plan: plan.network }, child) : undefined;
    const subnets = { privateSubnetIds: network?.privateSubnetIds, publicSubnetIds: network?.publicSubnetIds };
    return new EksCluster(
      `${name}-cluster`,
      { cluster: plan.cluster, region: plan.region, security: plan.security, secretsKeyArn: key.arn, ...subnets },
      child,
    );
  }

  /**
   * The CPU pool and the GPU pools, after the add-ons nodes need; then CoreDNS, which runs on the CPU pool. Returns
   * the options of every in-cluster object: they wait for CoreDNS (and so the pool).
   */
  private nodeGroups(name: string, plan: PlatformPlan, cluster: EksCluster) {
    const groupArgs = (p: NodeGroupPlan, shared?: PoolShared) => ({
      plan: p,
      clusterName: cluster.clusterName,
      nodeRoleArn: cluster.nodeRoleArn,
      subnetIds: cluster.nodeSubnetIds,
      vpcId: cluster.vpcId,
      clusterSecurityGroupId: cluster.clusterSecurityGroupId,
      ...shared,
    });
    const nodes = { parent: this, dependsOn: cluster.ready };
    const cpu = new CpuNodeGroup(`${name}-${plan.nodeGroups.cpu.name}`, groupArgs(plan.nodeGroups.cpu), nodes);
    // A pool's first group makes its placement group and EFA security group; its other groups share them.
    const firstOfPool = new Map<string, PoolShared>();
    const gpu = plan.nodeGroups.gpu.map((p) => {
      const group = new GpuNodeGroup(`${name}-${p.name}`, groupArgs(p, firstOfPool.get(p.pool)), nodes);
      if (!firstOfPool.has(p.pool)) firstOfPool.set(p.pool, group.shared);
      return group;
    });
    const dns = cluster.addNodeAddons([cpu]);
    const inCluster = { parent: this, providers: [cluster.provider], dependsOn: [...cluster.ready, cpu, ...dns] };
    return { gpu, inCluster };
  }

  /** The device plugin, the Cluster Autoscaler and the KubeRay operator (returned: workloads wait for it). */
  private clusterAddons(
    name: string,
    plan: PlatformPlan,
    cluster: EksCluster,
    options: { inCluster: pulumi.ComponentResourceOptions; withNamespace: pulumi.ComponentResourceOptions },
  ): KubeRayOperator {
    const { inCluster, withNamespace } = options;
    new NvidiaDevicePlugin(`${name}-nvidia-device-plugin`, { release: plan.helm.nvidiaDevicePlugin }, inCluster);
    if (plan.helm.efaDevicePlugin)
      new EfaDevicePlugin(`${name}-efa-device-plugin`, { release: plan.helm.efaDevicePlugin }, inCluster);
    const autoscaler = {
      clusterName: cluster.clusterName,
      region: plan.region,
      environment: plan.environment,
      cpuPool: plan.pools.cpu.name,
      kubernetesVersion: cluster.kubernetesVersion,
      spotFallback: plan.spotFallback,
    };
    new ClusterAutoscaler(`${name}-cluster-autoscaler`, autoscaler, inCluster);
    return new KubeRayOperator(`${name}-kuberay`, { release: plan.helm.kuberayOperator }, withNamespace);
  }

  /** Kueue's queue for the workload namespace, when queueing is on; it waits for the operator too. */
  private jobQueue(name: string, plan: PlatformPlan, inNamespace: pulumi.ComponentResourceOptions) {
    if (!plan.queue) return undefined;
    return new JobQueue(
      `${name}-queue`,
      { queue: plan.queue, cpuPool: plan.pools.cpu.name },
      { ...inNamespace, dependsOn: [this.storage.namespace, this.kuberayOperator] },
    );
  }

  /** The GPU observability stack, when `observability.enabled`. */
  private monitoring(
    name: string,
    plan: PlatformPlan,
    clusterName: pulumi.Output<string>,
    inNamespace: pulumi.ComponentResourceOptions,
  ): GpuObservability | undefined {
    if (!plan.observability) return undefined;
    return new GpuObservability(
      `${name}-observability`,
      {
        plan: plan.observability,
        clusterName,
        workloadNamespace: plan.workloadNamespace,
        environment: plan.environment,
        scaleToZeroPools: plan.pools.gpu.filter((p) => p.minNodes === 0).map((p) => p.name),
      },
      inNamespace,
    );
  }

  /**
   * What an add-on's resource options need on this platform (a Helm release of yours, a `KubeRayOperator`): the
   * Kubernetes provider, and the cluster, the CPU nodes and CoreDNS its pods need, so `pulumi up` creates it after
   * them. `new KubeRayOperator(name, { platform })` takes them by itself.
   */
  addonOptions(): pulumi.ComponentResourceOptions {
    return { providers: this.addonOrdering.providers, dependsOn: this.addonOrdering.dependsOn };
  }

  /**
   * What a RayWorkload's resource options need on this platform: its provider, the operator (whose chart installs the
   * RayJob kind), the namespace, the service account, the NetworkPolicies, the queue and the monitoring CRDs.
   * `new RayWorkload(name, { objects, platform })` takes them by itself.
   */
  workloadOptions(): pulumi.ComponentResourceOptions {
    return {
      providers: [this.provider],
      dependsOn: [
        this.kuberayOperator,
        this.storage.namespace,
        this.storage.serviceAccount,
        this.security,
        ...(this.queue ? [this.queue] : []),
        // A job's PrometheusRule needs the Prometheus Operator's CRDs.
        ...(this.observability ? [this.observability] : []),
      ],
    };
  }
}
