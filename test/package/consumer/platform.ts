// The whole platform added to an existing Pulumi stack, and a training job on it.
import * as aws from "@pulumi/aws";
import { RayGpuPlatform, RayWorkload, TrainingJob, loadRuntimePackage } from "pulumi-ray-gpu";
import type { StackConfigInput, TrainingJobSpecInput } from "pulumi-ray-gpu/core";

const region = "us-east-1";
const awsProvider = new aws.Provider("aws-us-east-1", { region });

const llama: TrainingJobSpecInput = {
  kind: "TrainingJob",
  name: "llama-ddp",
  model: "meta-llama/Llama-3.2-1B",
  image: "rayproject/ray:2.58.0-py311-gpu",
  entrypoint: "python -m ray_gpu.examples.train --data s3://my-datasets/tokens/",
  gpus: 8,
  globalBatchSize: 64,
};

// The keys a stack file would hold under `ray-gpu:`, typed (plain types: no zod in your program). The platform
// creates each listed workload's service account, whose S3 writes stay under that job's own folders.
const config: StackConfigInput = {
  environment: "prod",
  region,
  platform: {
    cluster: { mode: "create", name: "ml-prod", publicAccessCidrs: ["44.192.0.0/24"] }, // your public range
    gpuNodeGroups: [{ name: "a10g-4x", instanceType: "g5.12xlarge", maxNodes: 4 }],
  },
  workloads: [llama],
};
export const platform = new RayGpuPlatform("ray", { config }, { providers: [awsProvider] });

const training = new TrainingJob(llama);
const objects = training.render({
  environment: "prod",
  pools: platform.plan.pools,
  namespace: platform.workloadNamespace,
  runtime: loadRuntimePackage(),
});
export const job = new RayWorkload("llama-ddp", { objects }, platform.workloadOptions());

export const kubeconfig = platform.kubeconfig;
export const bucketName = platform.bucketName;
