/**
 * `pulumi-ray-gpu/core`: the pure planning core, with no Pulumi imports: the config schemas, the environment profiles,
 * the hardware and model catalogs, and the planners of pools, node groups, add-ons, network and storage.
 */
export { ConfigError, type ConfigIssue } from "./errors";
export type { Decision } from "./decisions";
export {
  ENVIRONMENTS,
  StackConfigSchema,
  parseStackConfig,
  type Environment,
  type StackConfig,
  type StackConfigInput,
} from "./config/stack";
export {
  ClusterSchema,
  CpuNodeGroupSchema,
  GpuNodeGroupSchema,
  NetworkSchema,
  PlatformSchema,
  StorageSchema,
  type ClusterConfig,
  type CpuNodeGroupConfig,
  type GpuNodeGroupConfig,
  type NetworkConfig,
  type PlatformConfig,
  type StorageConfig,
} from "./config/platform";
export {
  BatchInferenceSpecSchema,
  EmbeddingPipelineSpecSchema,
  LoRAFineTuneSpecSchema,
  TrainingJobSpecSchema,
  WorkloadSpecSchema,
  type BatchInferenceSpec,
  type EmbeddingPipelineSpec,
  type LoRAFineTuneSpec,
  type TrainingJobSpec,
  type TrainingJobSpecInput,
  type WorkloadKind,
  type WorkloadSpec,
  type WorkloadSpecInput,
} from "./config/workloads";
export { ENVIRONMENT_PROFILES, type EnvironmentProfile } from "./environments";
export {
  CPU_INSTANCE_TYPES,
  GPU_INSTANCES,
  GPU_INSTANCE_TYPES,
  type CpuInstanceType,
  type GpuInstanceSpec,
  type GpuInstanceType,
} from "./catalog/instances";
export { MODEL_NAMES, type ModelArchitecture } from "./models";
export type { MemoryEstimate } from "./memory/estimate";
export { GPU_TAINT, POOL_LABEL, planPools, type CpuPoolPlan, type GpuPoolPlan, type PoolsPlan } from "./pools";
export { planPlatform, type PlatformPlan } from "./platform/plan";
export { planCpuNodeGroup, planGpuNodeGroup, type NodeGroupPlan, type NodeGroupTarget } from "./platform/node-groups";
export {
  CHART_PINS,
  clusterAutoscalerRelease,
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
export type { ObservabilityConfig } from "./config/observability";
export { RAY_IMAGE, RAY_VERSION } from "./ray";
