/**
 * pulumi-ray-gpu: Ray on A10G (EC2 g5) GPUs on EKS. Pulumi components that provision the platform, workload constructs
 * that emit tuned KubeRay RayJobs, and the pure planning core they share.
 *
 * ```ts
 * import { RayGpuPlatform, RayWorkload, TrainingJob } from "pulumi-ray-gpu";
 * ```
 *
 * @packageDocumentation
 */
export * from "./core";
export * from "./workloads";
export * from "./components";
/** Reads the runtime package from disk (file I/O: kept out of the pure `core` and `workloads` entry points). */
export { loadRuntimePackage } from "./io/runtime-package";
export { simulateDeploy, type SimulateDeployOptions, type SimulatedDeploy } from "./cli/preview/simulate";
export type { PreviewResource } from "./cli/preview/run";
