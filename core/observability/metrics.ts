/**
 * The metrics the rules, dashboards and `ray-gpu report` read, with their exporters' own definitions. One table: a
 * query names a metric through it, and a test checks each name against the exporter's published list where one is
 * shipped here (DCGM's counters file of the pinned chart).
 */

/** One exported metric. */
export interface MetricDef {
  /** The name Prometheus stores. */
  readonly name: string;
  readonly type: "gauge" | "counter";
  /** What one sample means, with its unit. */
  readonly meaning: string;
  /** Where the exporter defines it. */
  readonly source: string;
}

const DCGM = "NVIDIA/dcgm-exporter 4.5.3-4.8.2 (chart 4.8.2), deployment/templates/metrics-configmap.yaml";
const RAY = "ray-project/ray 2.58, src/ray/stats/metric_defs.cc";
const RUNTIME = "pulumi-ray-gpu runtime library, runtime/ray_gpu/telemetry.py (ray.util.metrics counters)";
const KSM = "kubernetes/kube-state-metrics v2 (chart 8.4.0), docs/metrics/workload/pod-metrics.md";

/** Every metric the observability layer reads, by role. */
export const METRICS = {
  /** Labels with pod attribution (chart `DCGM_EXPORTER_KUBERNETES=true`): gpu, UUID, Hostname, namespace, pod, container. */
  gpuUtilization: {
    name: "DCGM_FI_DEV_GPU_UTIL",
    type: "gauge",
    meaning: "GPU utilization in %: the share of the last sample period in which a kernel ran (NVML utilization.gpu)",
    source: DCGM,
  },
  gpuMemoryUsed: {
    name: "DCGM_FI_DEV_FB_USED",
    type: "gauge",
    meaning: "framebuffer memory used, MiB",
    source: DCGM,
  },
  gpuMemoryFree: {
    name: "DCGM_FI_DEV_FB_FREE",
    type: "gauge",
    meaning: "framebuffer memory free, MiB",
    source: DCGM,
  },
  /**
   * What the GPU draws: a kernel that spins (a collective waiting for a rank that never comes) keeps utilization at
   * 100% while drawing little, unlike one that computes.
   */
  gpuPowerUsage: {
    name: "DCGM_FI_DEV_POWER_USAGE",
    type: "gauge",
    meaning: "power draw, W",
    source: DCGM,
  },
  gpuSmClock: {
    name: "DCGM_FI_DEV_SM_CLOCK",
    type: "gauge",
    meaning: "SM clock frequency, MHz",
    source: DCGM,
  },
  objectStoreMemory: {
    name: "ray_object_store_memory",
    type: "gauge",
    meaning:
      "object store bytes by Location (MMAP_SHM, MMAP_DISK, WORKER_HEAP, SPILLED) and ObjectState; " +
      'Location="SPILLED" is what has been spilled to disk',
    source: RAY,
  },
  rayDataOutputRows: {
    name: "ray_data_output_rows",
    type: "gauge",
    meaning: "rows a Ray Data operator has produced so far (cumulative), by dataset and operator",
    source: "ray-project/ray 2.58, python/ray/data/_internal/stats.py",
  },
  podLabels: {
    name: "kube_pod_labels",
    type: "gauge",
    meaning:
      "1 per pod, with the allow-listed pod labels as label_<name> (ray-gpu.io/workload: label_ray_gpu_io_workload)",
    source: KSM,
  },
  podPhase: {
    name: "kube_pod_status_phase",
    type: "gauge",
    meaning: "1 for the pod's current phase (Pending, Running, Succeeded, Failed, Unknown)",
    source: KSM,
  },
  podInfo: {
    name: "kube_pod_info",
    type: "gauge",
    meaning: "1 per pod, with the node it runs on",
    source: KSM,
  },
  containerRestarts: {
    name: "kube_pod_container_status_restarts_total",
    type: "counter",
    meaning: "restarts of a container",
    source: KSM,
  },
  lastTerminatedReason: {
    name: "kube_pod_container_status_last_terminated_reason",
    type: "gauge",
    meaning: "1 for the reason a container last terminated (OOMKilled, Error, ...)",
    source: KSM,
  },
  nodeLabels: {
    name: "kube_node_labels",
    type: "gauge",
    meaning: "1 per node, with the allow-listed node labels (ray-gpu.io/role: label_ray_gpu_io_role)",
    source: "kubernetes/kube-state-metrics v2 (chart 8.4.0), docs/metrics/cluster/node-metrics.md",
  },
  // The runtime library's own (runtime/ray_gpu/telemetry.py, METRICS): Ray counters, which Prometheus stores with
  // Ray's `ray_` prefix and `_total`; tagged workload and rank (training) or actor (Ray Data pools).
  inputWaitSeconds: {
    name: "ray_gpu_job_input_wait_seconds_total",
    type: "counter",
    meaning: "seconds a training worker waited for its next batch",
    source: RUNTIME,
  },
  computeSeconds: {
    name: "ray_gpu_job_compute_seconds_total",
    type: "counter",
    meaning: "seconds a training worker spent on its batches (forward, backward, step)",
    source: RUNTIME,
  },
  steps: {
    name: "ray_gpu_job_steps_total",
    type: "counter",
    meaning: "batches a training worker has stepped through",
    source: RUNTIME,
  },
  samples: {
    name: "ray_gpu_job_samples_total",
    type: "counter",
    meaning: "samples a worker trained on",
    source: RUNTIME,
  },
  tokens: {
    name: "ray_gpu_job_tokens_total",
    type: "counter",
    meaning: "tokens (attention mask) a worker trained on",
    source: RUNTIME,
  },
  actorBusySeconds: {
    name: "ray_gpu_job_actor_busy_seconds_total",
    type: "counter",
    meaning: "seconds a GPU actor of a Ray Data pool spent inside its calls",
    source: RUNTIME,
  },
  actorIdleSeconds: {
    name: "ray_gpu_job_actor_idle_seconds_total",
    type: "counter",
    meaning: "seconds a GPU actor waited between calls (after its first)",
    source: RUNTIME,
  },
} as const satisfies Record<string, MetricDef>;

/** Pod and node labels kube-state-metrics must export (`--metric-labels-allowlist`), which the rules join on. */
export const KSM_LABEL_ALLOWLIST = [
  "pods=[ray-gpu.io/workload,ray.io/node-type]",
  "nodes=[ray-gpu.io/role,ray-gpu.io/pool]",
] as const;

/** How kube-state-metrics names a Kubernetes label: `label_` and the key with every other character as `_`. */
export const ksmLabel = (key: string) => `label_${key.replace(/[^A-Za-z0-9_]/g, "_")}`;

/** Recording rules the stack's rule group defines; dashboards and per-job rules read these names. */
export const RECORDED = {
  /** 1 per pod of a ray-gpu job, labelled namespace, pod, workload. */
  podWorkload: "ray_gpu:pod_workload:info",
  /** DCGM_FI_DEV_GPU_UTIL of the GPUs held by a job's pods, with the workload label. */
  gpuUtilization: "ray_gpu:gpu_utilization:percent",
  /** Used share of each job GPU's framebuffer, 0-1, with the workload label. */
  gpuMemoryUsed: "ray_gpu:gpu_memory_used:ratio",
  /** DCGM_FI_DEV_FB_USED of the GPUs held by a job's pods, MiB, with the workload label. */
  gpuMemoryUsedMiB: "ray_gpu:gpu_memory_used:mib",
  /** DCGM_FI_DEV_POWER_USAGE of the GPUs held by a job's pods, W, with the workload label. */
  gpuPowerUsage: "ray_gpu:gpu_power_usage:watts",
  /** DCGM_FI_DEV_SM_CLOCK of the GPUs held by a job's pods, MHz, with the workload label. */
  gpuSmClock: "ray_gpu:gpu_sm_clock:mhz",
} as const;
