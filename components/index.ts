/** Thin Pulumi components over plans from `core/` and `workloads/`. */
export * from "./ray-workload";
