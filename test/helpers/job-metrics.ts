/**
 * Synthetic metrics of one running ray-gpu job, as the exporters would publish them: kube-state-metrics' pod labels,
 * DCGM's per-GPU utilization and memory (attributed to the worker pods), Ray's object store and Ray Data's row counts
 * (labelled with the workload by the PodMonitor). Deterministic, so the tests know every aggregate.
 */
import type { Series } from "./prometheus";

/** The shape of the fixture job. */
export interface JobFixture {
  readonly namespace: string;
  readonly workload: string;
  readonly workers: number;
  readonly gpusPerWorker: number;
  /** Samples per series (one per step). */
  readonly steps: number;
  /** GPU utilization of GPU `g` of worker `w` at step `t`, in %. */
  readonly utilization: (w: number, g: number, t: number) => number;
  /** Framebuffer used, MiB, of GPU `g` of worker `w` at step `t`. */
  readonly memoryUsedMiB: (w: number, g: number, t: number) => number;
  /** Rows per second Ray Data's map operator produces. */
  readonly rowsPerSecond: number;
  /** Bytes spilled at step `t` (0 for a job that keeps its plan). */
  readonly spilledBytes: (t: number) => number;
  /**
   * The runtime's telemetry per worker: seconds waiting for input and computing per second of wall time, samples per
   * second; and per GPU actor its busy share. @default none (a job whose image predates the telemetry)
   */
  readonly telemetry?: {
    readonly waitShare: number;
    readonly samplesPerSecond: number;
    /** Steps a worker takes per second. @default 1 */
    readonly stepsPerSecond?: number;
    readonly actorBusyShare?: number;
  };
  /** Steps `[first, last]` the job's pods exist (every series is absent outside). @default every step */
  readonly alive?: readonly [number, number];
}

/** A10G framebuffer as DCGM reports it: used + free, MiB (24 GB board, 23028 MiB visible). */
export const A10G_FRAMEBUFFER_MIB = 23028;

const worker = (j: JobFixture, w: number) => `${j.workload}-raycluster-abcde-gpu-worker-${w}`;

/** Every series of the job, one sample per `stepSeconds`. */
export function jobSeries(j: JobFixture, stepSeconds: number): Series[] {
  const all = jobSeriesAlways(j, stepSeconds);
  const [first, last] = j.alive ?? [0, j.steps - 1];
  const alive = all.map((s) => ({ ...s, values: s.values.map((v, i) => (i < first || i > last ? null : v)) }));
  // The submitter pod (a Job KubeRay keeps after the run, Completed) is labelled with the workload from the start
  // to the end of the window: it must not stretch the job's lifetime.
  const submitter: Series = {
    name: "kube_pod_labels",
    type: "gauge",
    labels: { namespace: j.namespace, pod: `${j.workload}-submitter-xyz`, label_ray_gpu_io_workload: j.workload },
    values: Array.from({ length: j.steps }, () => 1),
  };
  return [...alive, submitter];
}

/** The pods of a job fixture: its head first, then its workers. */
function podsOf(j: JobFixture): string[] {
  return [`${j.workload}-raycluster-abcde-head`, ...Array.from({ length: j.workers }, (_, w) => worker(j, w))];
}

/** kube-state-metrics' pod labels of every Ray pod of the job. */
function podLabelSeries(j: JobFixture, pods: readonly string[], t: readonly number[]): Series[] {
  return pods.map((pod, i) => ({
    name: "kube_pod_labels",
    type: "gauge",
    labels: {
      namespace: j.namespace,
      pod,
      label_ray_gpu_io_workload: j.workload,
      label_ray_io_node_type: i === 0 ? "head" : "worker",
    },
    values: t.map(() => 1),
  }));
}

/** DCGM's utilization, framebuffer used and free, per GPU of every worker. */
function gpuSeries(j: JobFixture, t: readonly number[]): Series[] {
  const series: Series[] = [];
  for (let w = 0; w < j.workers; w++) {
    for (let g = 0; g < j.gpusPerWorker; g++) {
      const labels = {
        namespace: j.namespace,
        pod: worker(j, w),
        container: "ray-worker",
        gpu: String(g),
        Hostname: `node-${w}`,
      };
      const used = (i: number) => j.memoryUsedMiB(w, g, i);
      series.push(
        { name: "DCGM_FI_DEV_GPU_UTIL", type: "gauge", labels, values: t.map((i) => j.utilization(w, g, i)) },
        { name: "DCGM_FI_DEV_FB_USED", type: "gauge", labels, values: t.map(used) },
        { name: "DCGM_FI_DEV_FB_FREE", type: "gauge", labels, values: t.map((i) => A10G_FRAMEBUFFER_MIB - used(i)) },
      );
    }
  }
  return series;
}

/** Ray's object store per pod: 2 GiB in shared memory, and the fixture's spilled bytes on the first worker. */
function objectStoreSeries(j: JobFixture, pods: readonly string[], t: readonly number[]): Series[] {
  return pods.flatMap((pod) => {
    const ray = { namespace: j.namespace, pod, workload: j.workload, ObjectState: "SEALED" };
    return [
      {
        name: "ray_object_store_memory",
        type: "gauge",
        labels: { ...ray, Location: "MMAP_SHM" },
        values: t.map(() => 2 * 1024 ** 3),
      },
      {
        name: "ray_object_store_memory",
        type: "gauge",
        labels: { ...ray, Location: "SPILLED" },
        values: t.map((i) => (pod === pods[1] ? j.spilledBytes(i) : 0)),
      },
    ];
  });
}

function jobSeriesAlways(j: JobFixture, stepSeconds: number): Series[] {
  const t = Array.from({ length: j.steps }, (_, i) => i);
  const pods = podsOf(j);
  const series: Series[] = [...podLabelSeries(j, pods, t), ...gpuSeries(j, t), ...objectStoreSeries(j, pods, t)];
  if (j.telemetry) series.push(...telemetrySeries(j, j.telemetry, stepSeconds, t));
  series.push({
    name: "ray_data_output_rows",
    type: "gauge",
    labels: {
      namespace: j.namespace,
      pod: pods[0]!,
      workload: j.workload,
      dataset: "dataset_1_0",
      operator: "MapBatches(Embed)",
    },
    values: t.map((i) => i * stepSeconds * j.rowsPerSecond),
  });
  return series;
}

/** The runtime's counters of each worker (and actor), growing at the fixture's rates. */
function telemetrySeries(
  j: JobFixture,
  tel: NonNullable<JobFixture["telemetry"]>,
  stepSeconds: number,
  t: number[],
): Series[] {
  const out: Series[] = [];
  const counter = (name: string, labels: Record<string, string>, perSecond: number): Series => ({
    name,
    type: "counter",
    labels: { namespace: j.namespace, workload: j.workload, ...labels },
    values: t.map((i) => i * stepSeconds * perSecond),
  });
  for (let w = 0; w < j.workers; w++) {
    const labels = { pod: worker(j, w), rank: String(w) };
    out.push(counter("ray_gpu_job_input_wait_seconds", labels, tel.waitShare));
    out.push(counter("ray_gpu_job_compute_seconds", labels, 1 - tel.waitShare));
    out.push(counter("ray_gpu_job_samples", labels, tel.samplesPerSecond / j.workers));
    out.push(counter("ray_gpu_job_steps", labels, tel.stepsPerSecond ?? 1));
    if (tel.actorBusyShare !== undefined) {
      const actor = { pod: worker(j, w), actor: String(w) };
      out.push(counter("ray_gpu_job_actor_busy_seconds", actor, tel.actorBusyShare));
      out.push(counter("ray_gpu_job_actor_idle_seconds", actor, 1 - tel.actorBusyShare));
    }
  }
  return out;
}
