/** Thin Pulumi components over plans from `core/` and `workloads/`. */
export * from "./network";
export * from "./cluster";
export * from "./node-group";
export * from "./addons";
export * from "./storage";
export * from "./platform";
export * from "./ray-workload";
