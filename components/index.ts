/** `pulumi-ray-gpu/components`: thin Pulumi components over the plans of `core` and `workloads`. */
export { RayGpuPlatform, type RayGpuPlatformArgs } from "./platform";
export { Network, type NetworkArgs } from "./network";
export { EksCluster, type EksClusterArgs } from "./cluster";
export {
  clusterPlacementGroup,
  CpuNodeGroup,
  efaSecurityGroup,
  GpuNodeGroup,
  type NodeGroupArgs,
  type PoolShared,
} from "./node-group";
export {
  ClusterAutoscaler,
  EfaDevicePlugin,
  KubeRayOperator,
  NvidiaDevicePlugin,
  type ClusterAutoscalerArgs,
  type HelmAddonArgs,
  type KubeRayOperatorArgs,
} from "./addons";
export { JobQueue, type JobQueueArgs } from "./queueing";
export { Storage, type StorageArgs } from "./storage";
export { RayGpuRuntime, RayWorkload, type RayGpuRuntimeArgs, type RayWorkloadArgs } from "./ray-workload";
export { WorkloadSecurity, type WorkloadSecurityArgs } from "./security";
export {
  DcgmExporter,
  GpuObservability,
  PrometheusStack,
  RayMonitoring,
  type DcgmExporterArgs,
  type GpuObservabilityArgs,
  type PrometheusStackArgs,
  type RayMonitoringArgs,
} from "./observability";
