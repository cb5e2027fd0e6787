/** The pure planning core: catalogs, config schema, environment profiles, pool and cluster-shape plans. */
export * from "./errors";
export * from "./quantity";
export * from "./decisions";
export * from "./catalog/instances";
export * from "./catalog/eks-allocatable";
export * from "./catalog/daemonsets";
export * from "./config/platform";
export * from "./config/workloads";
export * from "./config/stack";
export * from "./config/zod-issues";
export * from "./environments";
export * from "./pools";
export * from "./cluster/shape";
export * from "./cluster/head";
export * from "./cluster/env";
export * from "./serialize";
