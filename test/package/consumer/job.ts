// A job on a cluster someone else runs: you have its kubeconfig and GPU nodes labelled ray-gpu.io/pool=a10g and
// tainted nvidia.com/gpu=true:NoSchedule. You add the KubeRay operator (if it has none) and an embedding pipeline.
import * as k8s from "@pulumi/kubernetes";
import {
  EmbeddingPipeline,
  KubeRayOperator,
  RayGpuRuntime,
  RayWorkload,
  WorkloadSecurity,
  loadRuntimePackage,
  parsePlatformConfig,
  planPools,
} from "pulumi-ray-gpu";

const provider = new k8s.Provider("their-cluster", { kubeconfig: process.env["THEIR_KUBECONFIG"] ?? "" });
const pools = planPools(
  parsePlatformConfig({
    cluster: { mode: "existing", name: "their-eks" },
    gpuNodeGroups: [{ name: "a10g", instanceType: "g5.2xlarge", maxNodes: 2 }],
  }),
);
const operator = new KubeRayOperator("kuberay", {}, { provider });
const namespace = new k8s.core.v1.Namespace("embeddings", { metadata: { name: "embeddings" } }, { provider });
// The runtime library every job in the namespace mounts (one ConfigMap, shared).
const runtime = loadRuntimePackage();
const shared = new RayGpuRuntime("runtime", { namespace: "embeddings", runtime }, { provider, dependsOn: [namespace] });
// The namespace's NetworkPolicies (each job's Ray token is KubeRay's, one per RayCluster).
const security = new WorkloadSecurity(
  "security",
  { namespace: "embeddings", egress: { httpsCidrs: ["0.0.0.0/0"] } },
  { provider, dependsOn: [namespace] },
);

const embed = new EmbeddingPipeline({
  kind: "EmbeddingPipeline",
  name: "embed-docs",
  model: "BAAI/bge-large-en-v1.5",
  image: "rayproject/ray:2.58.0-py311-gpu",
  entrypoint: "python -m ray_gpu.examples.embed",
  gpus: 2,
  dataset: { uri: "s3://their-data/docs/", rows: 1_000_000 },
});
const objects = embed.render({
  environment: "dev",
  pools,
  namespace: "embeddings",
  serviceAccountName: "default",
  runtime,
});
export const embedJob = new RayWorkload(
  "embed-docs",
  { objects },
  { provider, dependsOn: [operator, namespace, shared, security] },
);
