/**
 * Environment variables a workload may not set in `env`, `secretEnv` or `runtimeEnv.envVars`: pulumi-ray-gpu, Ray,
 * KubeRay or the NVIDIA device plugin set them on the Ray containers, and a user value would either be overwritten
 * without a word or break the job in ways no message explains (a `RAY_ADDRESS` that points elsewhere, a
 * `CUDA_VISIBLE_DEVICES` that hides the GPUs Ray assigned). One exhaustive table, with the source of each row.
 */

/** Who sets a variable, and where that is written down. */
export interface OwnedEnv {
  /** The name, or the prefix when `prefix` is true. */
  readonly name: string;
  readonly prefix?: true;
  readonly owner: string;
  readonly source: string;
}

const KUBERAY_ENV_SOURCE = "KubeRay 1.7 ray-operator/controllers/ray/utils/constant.go (container env)";

/** Every name or prefix a workload may not set, with who owns it. */
export const OWNED_ENV: readonly OwnedEnv[] = [
  { name: "RAY_GPU_", prefix: true, owner: "pulumi-ray-gpu (the tuned values)", source: "docs/runtime.md" },
  { name: "NCCL_", prefix: true, owner: "pulumi-ray-gpu (the NCCL settings of the plan)", source: "docs/tuning.md" },
  { name: "PYTORCH_CUDA_ALLOC_CONF", owner: "pulumi-ray-gpu (the CUDA allocator)", source: "docs/tuning.md" },
  {
    name: "NVIDIA_VISIBLE_DEVICES",
    owner: "the NVIDIA device plugin (the GPUs of the container)",
    source: "NVIDIA k8s-device-plugin README",
  },
  {
    name: "CUDA_VISIBLE_DEVICES",
    owner: "Ray (the GPUs it assigns to each task and actor)",
    source: "Ray docs, Accelerator support: Ray sets CUDA_VISIBLE_DEVICES",
  },
  ...[
    "RAY_CLUSTER_NAME",
    "RAY_IP",
    "FQ_RAY_IP",
    "RAY_PORT",
    "RAY_ADDRESS",
    "REDIS_PASSWORD",
    "RAY_DASHBOARD_ENABLE_K8S_DISK_USAGE",
    "RAY_external_storage_namespace",
    "RAY_gcs_rpc_server_reconnect_timeout_s",
    "RAY_timeout_ms_task_wait_for_death_info",
    "RAY_gcs_server_request_timeout_seconds",
    "RAY_SERVE_KV_TIMEOUT_S",
    "RAY_USAGE_STATS_KUBERAY_IN_USE",
    "RAY_USAGE_STATS_EXTRA_TAGS",
    "KUBERAY_GEN_RAY_START_CMD",
    "RAY_DASHBOARD_ADDRESS",
    "RAY_JOB_SUBMISSION_ID",
    "RAY_CLOUD_INSTANCE_ID",
    "RAY_NODE_TYPE_NAME",
  ].map((name) => ({ name, owner: "KubeRay", source: KUBERAY_ENV_SOURCE })),
  ...["RAY_AUTH_MODE", "RAY_AUTH_TOKEN"].map((name) => ({
    name,
    owner: "KubeRay (token authentication, authOptions)",
    source: "docs/security.md; KubeRay 1.7 RayCluster authOptions",
  })),
];

/** Who owns `name`, or undefined when a workload may set it. */
export function envOwner(name: string): OwnedEnv | undefined {
  return OWNED_ENV.find((o) => (o.prefix ? name.startsWith(o.name) : name === o.name));
}

/** The refusal for an owned name: who sets it and why the user's value cannot stand. */
export function ownedEnvProblem(name: string): string | undefined {
  const owner = envOwner(name);
  if (!owner) return undefined;
  const what = owner.prefix ? `${owner.name}* is` : "is";
  return `${what} set by ${owner.owner} on every Ray container (${owner.source}); choose another name`;
}
