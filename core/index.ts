/**
 * `pulumi-ray-gpu/core`: the pure planning core, with no Pulumi imports: the config types, the environment profiles,
 * the hardware and model catalogs, and the planners of pools, node groups, add-ons, network and storage.
 */
export { ConfigError, type ConfigIssue } from "./errors";
export type { Decision } from "./decisions";
export { ENVIRONMENTS, parsePlatformConfig, parseStackConfig, type Environment } from "./config/stack";
export type { WorkloadKind } from "./config/workloads";
// The configuration and the specs as plain types (generated from the zod schemas, which stay inside).
export type {
  BatchInferenceSpec,
  BatchInferenceSpecInput,
  ClusterConfig,
  ClusterConfigInput,
  CpuNodeGroupConfig,
  CpuNodeGroupConfigInput,
  CustomModelArchitecture,
  CustomModelArchitectureInput,
  DaemonSetReserveConfig,
  DaemonSetReserveConfigInput,
  DatasetConfig,
  DatasetConfigInput,
  EmbeddingPipelineSpec,
  EmbeddingPipelineSpecInput,
  GpuNodeGroupConfig,
  GpuNodeGroupConfigInput,
  ImagesConfig,
  ImagesConfigInput,
  LoRAFineTuneSpec,
  LoRAFineTuneSpecInput,
  LoraConfig,
  LoraConfigInput,
  ModelRef,
  ModelRefInput,
  NetworkConfig,
  NetworkConfigInput,
  ObservabilityConfig,
  ObservabilityConfigInput,
  PlatformConfig,
  PlatformConfigInput,
  QueueingConfig,
  QueueingConfigInput,
  SecretEnvSource,
  SecretEnvSourceInput,
  SecurityConfig,
  SecurityConfigInput,
  StackConfig,
  StackConfigInput,
  StorageConfig,
  StorageConfigInput,
  TrainingJobSpec,
  TrainingJobSpecInput,
  WorkloadSpec,
  WorkloadSpecInput,
} from "./config/types";
export { ENVIRONMENT_PROFILES, type EnvironmentProfile } from "./environments";
export { ACCELERATORS, ACCELERATOR_NAMES, type AcceleratorName, type AcceleratorSpec } from "./catalog/accelerators";
export {
  acceleratorOf,
  CPU_INSTANCE_TYPES,
  GPU_INSTANCES,
  GPU_INSTANCE_TYPES,
  type CpuInstanceType,
  type GpuInstanceSpec,
  type GpuInstanceType,
} from "./catalog/instances";
export { MODEL_NAMES, type ModelArchitecture } from "./models";
export type { MemoryEstimate } from "./memory/estimate";
export {
  BOUND_TEXT,
  FORECAST_BOUNDS,
  TRANSPORTS,
  WORK_UNITS,
  type Forecast,
  type ForecastBound,
  type ForecastResult,
  type ForecastWork,
  type ScalingPoint,
  type Transport,
  type WorkUnit,
} from "./forecast/types";
export { SCALING_GPUS } from "./forecast/scaling";
export {
  EFA_LABEL,
  GPU_TAINT,
  POOL_LABEL,
  planPools,
  type CpuPoolPlan,
  type GpuPoolPlan,
  type PoolEfa,
  type PoolsPlan,
} from "./pools";
export { EFA_HUGEPAGES, EFA_RESOURCE, HUGEPAGES_2MI_RESOURCE, type EfaHugepages } from "./catalog/efa";
export { planPlatform, type PlatformPlan } from "./platform-plan";
export {
  planCpuNodeGroup,
  planGpuNodeGroup,
  planGpuNodeGroups,
  type NodeGroupPlan,
  type NodeGroupTarget,
} from "./platform/node-groups";
export { planSpotFallback, type SpotFallbackPlan } from "./platform/spot-fallback";
export {
  CHART_PINS,
  clusterAutoscalerRelease,
  efaDevicePluginRelease,
  kuberayOperatorRelease,
  nvidiaDevicePluginRelease,
  type HelmReleasePlan,
} from "./platform/addons";
export { planNetwork, type NetworkPlan } from "./platform/network";
export { planStorage, type StoragePlan } from "./platform/storage";
export {
  dcgmExporterRelease,
  kubePrometheusStackRelease,
  OBSERVABILITY_CHARTS,
  planObservability,
  type ObservabilityPlan,
  type RemoteWritePlan,
} from "./observability/charts";
export {
  DEFAULT_GPU_UTILIZATION_TARGET,
  jobRuleGroup,
  stackRuleGroup,
  type AlertRule,
  type JobAlertInput,
  type RecordingRule,
  type RuleGroup,
  type StackAlertInput,
} from "./observability/rules";
export { jobDashboard, JOB_PANELS, type DashboardPanel } from "./observability/dashboards";
export { METRICS, type MetricDef } from "./observability/metrics";
export { RAY_IMAGE, RAY_VERSION } from "./ray";
export { checkProgram, type DeployNode, type DeployProblem } from "./deploy/program";
