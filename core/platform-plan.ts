/**
 * The whole platform, planned from the typed stack config: network (new clusters only), node groups, add-ons,
 * storage. `RayGpuPlatform` maps this plan to resources; tests compare it with `toEqual`.
 */
import type { ClusterConfig } from "./config/platform";
import type { StackConfig } from "./config/stack";
import { planPools, type PoolsPlan } from "./pools";
import {
  clusterAutoscalerRelease,
  kuberayOperatorRelease,
  nvidiaDevicePluginRelease,
  efaDevicePluginRelease,
  type HelmReleasePlan,
} from "./platform/addons";
import { planNetwork, type NetworkPlan } from "./platform/network";
import { planCpuNodeGroup, planGpuNodeGroups, type NodeGroupPlan } from "./platform/node-groups";
import { planSpotFallback, type SpotFallbackPlan } from "./platform/spot-fallback";
import { planStorage, type StoragePlan } from "./platform/storage";
import { planSecurity, type SecurityPlan } from "./platform/security";
import { planQueue, type QueuePlan } from "./platform/queueing";
import { planLayout, poolRoomLeft, type PlatformLayout } from "./deploy/layout";
import { planObservability, type ObservabilityPlan } from "./observability/charts";
import { destroyLeftovers, type DestroyLeftover } from "./platform/destroy";

/** The whole platform, planned: network, cluster, pools and node groups, add-on releases, storage. */
export interface PlatformPlan {
  readonly environment: StackConfig["environment"];
  readonly region: string;
  readonly cluster: ClusterConfig;
  /** Undefined when an existing cluster is adopted (its subnets are used). */
  readonly network: NetworkPlan | undefined;
  readonly pools: PoolsPlan;
  /** The CPU pool's node group and the GPU pools', in config order (a spot-with-fallback pool's two: spot first). */
  readonly nodeGroups: { readonly cpu: NodeGroupPlan; readonly gpu: readonly NodeGroupPlan[] };
  /** What the Cluster Autoscaler is told for the spot-with-fallback pools; undefined when there are none. */
  readonly spotFallback: SpotFallbackPlan | undefined;
  readonly helm: {
    readonly kuberayOperator: HelmReleasePlan;
    readonly nvidiaDevicePlugin: HelmReleasePlan;
    readonly clusterAutoscaler: HelmReleasePlan;
    /** The EFA device plugin, when a pool sets `efa: true`. */
    readonly efaDevicePlugin: HelmReleasePlan | undefined;
  };
  readonly workloadNamespace: string;
  readonly storage: StoragePlan;
  readonly security: SecurityPlan;
  /** The job queue (Kueue), when `queueing.enabled`. */
  readonly queue: QueuePlan | undefined;
  /** Metrics, alerts and dashboards (DCGM exporter, kube-prometheus-stack), when `observability.enabled`. */
  readonly observability: ObservabilityPlan | undefined;
  /** Where the platform's own pods land on the pools, and what they leave for Ray pods (the deploy simulation). */
  readonly layout: PlatformLayout;
  /** What `pulumi destroy` leaves behind or blocks on (`./destroy.ts`). */
  readonly destroy: readonly DestroyLeftover[];
}

/**
 * The platform's own Helm releases: the KubeRay operator, the device plugin (and the EFA one where a pool uses EFA)
 * and the Cluster Autoscaler.
 */
function platformReleases(config: StackConfig, cpuPool: string, spotFallback: PlatformPlan["spotFallback"]) {
  const { platform, environment, region } = config;
  return {
    kuberayOperator: kuberayOperatorRelease(cpuPool, [platform.workloadNamespace]),
    nvidiaDevicePlugin: nvidiaDevicePluginRelease(),
    efaDevicePlugin: platform.gpuNodeGroups.some((g) => g.efa) ? efaDevicePluginRelease() : undefined,
    clusterAutoscaler: clusterAutoscalerRelease({
      clusterName: platform.cluster.name,
      region,
      environment,
      cpuPool,
      kubernetesVersion: platform.cluster.mode === "create" ? platform.cluster.kubernetesVersion : undefined,
      spotFallback,
    }),
  };
}

/** Plans the platform of a stack. */
export function planPlatform(config: StackConfig): PlatformPlan {
  const { platform, environment, region } = config;
  const pools = planPools(platform);
  const clusterName = platform.cluster.name;
  const nodeGroups = {
    cpu: planCpuNodeGroup(pools.cpu, { clusterName }),
    gpu: pools.gpu.flatMap((g) => planGpuNodeGroups(g, { clusterName, environment })),
  };
  const spotFallback = planSpotFallback(pools.gpu, nodeGroups.gpu);
  const helm = platformReleases(config, pools.cpu.name, spotFallback);
  const observability = planObservability(
    platform.observability,
    pools.cpu.name,
    platform.cluster.mode,
    platform.workloadNamespace,
  );
  const layout = planLayout({
    pools,
    groups: [nodeGroups.cpu, ...nodeGroups.gpu],
    cluster: platform.cluster,
    helm,
    observability,
    queueing: platform.queueing.enabled,
  });
  const plan: Omit<PlatformPlan, "destroy"> = {
    environment,
    region,
    cluster: platform.cluster,
    network:
      platform.cluster.mode === "create" ? planNetwork(platform.network, environment, region, clusterName) : undefined,
    pools,
    nodeGroups,
    spotFallback,
    helm,
    workloadNamespace: platform.workloadNamespace,
    storage: planStorage(
      platform.storage,
      environment,
      platform.workloadNamespace,
      config.workloads.map((w) => w.name),
    ),
    security: planSecurity(config),
    queue: platform.queueing.enabled
      ? planQueue(pools, platform.workloadNamespace, poolRoomLeft(layout, pools.cpu.name))
      : undefined,
    observability,
    layout,
  };
  return { ...plan, destroy: destroyLeftovers(plan) };
}
