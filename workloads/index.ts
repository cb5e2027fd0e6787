/** Typed workload constructs that emit tuned KubeRay RayJobs. Pure: no Pulumi imports. */
export * from "./context";
export * from "./training-job";
export * from "./stack";
export * from "./rayjob/types";
export * from "./rayjob/render";
export * from "./rayjob/checks";
