/**
 * The per-job Grafana dashboard: one dashboard with a `workload` variable (every ray-gpu job of the namespace), panels
 * for GPU utilization and memory per worker, the object store by location and what has spilled, and Ray Data's
 * throughput per operator. Every panel's query reads the recording rules of ./rules or Ray's own metrics, and the tests
 * run each one against a real Prometheus. Pure: a plain Grafana dashboard model (schemaVersion 39).
 */
import { METRICS, RECORDED } from "./metrics";

/** One panel: its title, unit and PromQL, with `$namespace` and `$workload` standing for the variables. */
export interface DashboardPanel {
  readonly title: string;
  readonly type: "timeseries" | "stat";
  /** Grafana unit id ("percent", "decmbytes", "bytes", "rowsps"). */
  readonly unit: string;
  readonly expr: string;
  readonly legend: string;
  readonly description: string;
}

const job = `namespace="$namespace", workload="$workload"`;

/** The panels, in order. */
export const JOB_PANELS: readonly DashboardPanel[] = [
  {
    title: "Average GPU utilization",
    type: "stat",
    unit: "percent",
    expr: `avg(${RECORDED.gpuUtilization}{${job}})`,
    legend: "average",
    description:
      "DCGM_FI_DEV_GPU_UTIL averaged over the job's GPUs: what the utilization alert compares with the target.",
  },
  {
    title: "GPU utilization per worker",
    type: "timeseries",
    unit: "percent",
    expr: `${RECORDED.gpuUtilization}{${job}}`,
    legend: "{{pod}} GPU {{gpu}}",
    description: "Each GPU of each worker pod (DCGM_FI_DEV_GPU_UTIL, attributed to the pod holding the GPU).",
  },
  {
    title: "GPU memory used per worker",
    type: "timeseries",
    unit: "decmbytes",
    expr: `${RECORDED.gpuMemoryUsedMiB}{${job}}`,
    legend: "{{pod}} GPU {{gpu}}",
    description: "Framebuffer used (DCGM_FI_DEV_FB_USED, MiB); the plan's peak per GPU is in `ray-gpu plan`.",
  },
  {
    title: "Object store by location",
    type: "timeseries",
    unit: "bytes",
    expr: `sum by (Location) (${METRICS.objectStoreMemory.name}{${job}})`,
    legend: "{{Location}}",
    description: "Ray's object store: shared memory, fallback to disk, worker heap, and SPILLED.",
  },
  {
    title: "Spilled bytes",
    type: "stat",
    unit: "bytes",
    expr: `sum(${METRICS.objectStoreMemory.name}{${job}, Location="SPILLED"}) or vector(0)`,
    legend: "spilled",
    description: "Bytes spilled to disk; the plan sizes every job so that this stays 0 (an alert fires otherwise).",
  },
  {
    title: "Data-wait fraction",
    type: "timeseries",
    unit: "percentunit",
    expr:
      `sum(rate(${METRICS.inputWaitSeconds.name}{${job}}[2m])) / (sum(rate(${METRICS.inputWaitSeconds.name}{${job}}[2m])) + ` +
      `sum(rate(${METRICS.computeSeconds.name}{${job}}[2m])))`,
    legend: "waiting for input",
    description: "Share of the training loop's time spent waiting for the next batch (ray_gpu.telemetry).",
  },
  {
    title: "Step time",
    type: "timeseries",
    unit: "s",
    expr:
      `(sum(rate(${METRICS.inputWaitSeconds.name}{${job}}[2m])) + sum(rate(${METRICS.computeSeconds.name}{${job}}[2m]))) ` +
      `/ sum(rate(${METRICS.steps.name}{${job}}[2m]))`,
    legend: "seconds per step",
    description: "Seconds a training worker takes per batch, waiting and computing, averaged over the workers.",
  },
  {
    title: "Samples per second",
    type: "timeseries",
    unit: "short",
    expr: `sum(rate(${METRICS.samples.name}{${job}}[2m]))`,
    legend: "samples/s",
    description: "Samples the job's training workers process per second, all workers together.",
  },
  {
    title: "GPU actor busy fraction",
    type: "timeseries",
    unit: "percentunit",
    expr:
      // Actors are named by process id, unique within a pod only.
      `sum by (pod, actor) (rate(${METRICS.actorBusySeconds.name}{${job}}[2m])) / (sum by (pod, actor) ` +
      `(rate(${METRICS.actorBusySeconds.name}{${job}}[2m])) + sum by (pod, actor) (rate(${METRICS.actorIdleSeconds.name}{${job}}[2m])))`,
    legend: "{{pod}} actor {{actor}}",
    description: "Share of each GPU actor's time spent inside its calls: below 1, the pipeline leaves it waiting.",
  },
  {
    title: "Ray Data rows per second",
    type: "timeseries",
    unit: "rowsps",
    expr: `sum by (operator) (rate(${METRICS.rayDataOutputRows.name}{${job}}[2m]))`,
    legend: "{{operator}}",
    description: "Rows each Ray Data operator produces per second (embedding and inference jobs).",
  },
];

/** The dashboard's stable id (Grafana's `uid`, at most 40 characters) for a workload namespace. */
export const jobDashboardUid = (namespace: string) => `ray-gpu-jobs-${namespace}`.slice(0, 40);

/** The Grafana dashboard model for jobs of `namespace`. */
export function jobDashboard(namespace: string): Record<string, unknown> {
  const datasource = { type: "prometheus", uid: "${datasource}" };
  return {
    uid: jobDashboardUid(namespace),
    title: `ray-gpu jobs (${namespace})`,
    tags: ["ray-gpu", "ray", "gpu"],
    schemaVersion: 39,
    editable: false,
    refresh: "30s",
    time: { from: "now-6h", to: "now" },
    templating: {
      list: [
        { name: "datasource", type: "datasource", query: "prometheus", label: "Prometheus" },
        { name: "namespace", type: "constant", query: namespace, hide: 2 },
        {
          name: "workload",
          type: "query",
          label: "Job",
          datasource,
          query: {
            query: `label_values(${RECORDED.podWorkload}{namespace="$namespace"}, workload)`,
            refId: "workload",
          },
          refresh: 2,
          sort: 1,
        },
      ],
    },
    panels: JOB_PANELS.map((p, i) => ({
      id: i + 1,
      title: p.title,
      type: p.type,
      description: p.description,
      datasource,
      gridPos: { h: 8, w: p.type === "stat" ? 6 : 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      targets: [{ refId: "A", datasource, expr: p.expr, legendFormat: p.legend }],
    })),
  };
}
