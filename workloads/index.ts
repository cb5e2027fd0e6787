/** Typed workload constructs that emit tuned KubeRay RayJobs. Pure: no Pulumi imports. */
export * from "./context";
export * from "./workload";
export * from "./memory";
export * from "./needs";
export * from "./stack";
export * from "./rayjob/types";
export * from "./rayjob/render";
export * from "./rayjob/checks";
export * from "./tuning/training";
export * from "./tuning/file";
export * from "./tuning/data";
