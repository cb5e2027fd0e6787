/** pulumi-ray-gpu: Ray on A10G (EC2 g5) GPUs on EKS. Components, workload constructs and the planning core. */
export * from "./core";
export * from "./workloads";
export * from "./components";
