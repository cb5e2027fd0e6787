/** Typed workload constructs that emit tuned KubeRay RayJobs. Pure: no Pulumi imports, no file I/O. */
export * from "./context";
export * from "./workload";
export * from "./stack";
export * from "./k8s/types";
export * from "./rayjob/render";
export * from "./rayjob/checks";
export * from "./rayjob/runtime-env";
export * from "./contract/document";
export * from "./contract/configmaps";
export * from "./contract/json-schema";
export * from "./kinds/api/strategy";
export * from "./kinds/table";
