/**
 * Synthetic series for the hung, starved and idle alerts under promtool (rules-promtool.test.ts): one job per
 * situation, one sample a minute. Every training job but `slow` plans 2 s steps, so its stall window is the 5-minute
 * floor; `slow` plans 45 s steps: 10 of them, 7m30s. Counters grow as the runtime's do: a step, a wait and a body
 * count when they end, so a hung or idle loop's counters all stop.
 */
import type { JobAlertInput } from "../../../core/observability/rules";

export const NS = "ray-jobs";

/** `name{labels}` as promtool's series notation. */
export const series = (name: string, labels: Record<string, string>, values: string) => ({
  series: `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",")}}`,
  values,
});
export const pod = (p: string) => ({ namespace: NS, pod: p });
export const gpu = (p: string) => ({ ...pod(p), gpu: "0", Hostname: "ip-10-0-1-1", container: "ray-worker" });

/** A training job of the state tests (target 90%: starved above a 10% data-wait fraction). */
const training = (workload: string, plannedStepSeconds: number): JobAlertInput => ({
  workload,
  namespace: NS,
  kind: "TrainingJob",
  preRunningDeadlineSeconds: 2700,
  noSpillBecause: "the trainer passes no large objects",
  plannedStepSeconds,
});

export const STATE_JOBS: JobAlertInput[] = [
  ...["hung", "idle", "starved", "trickle", "healthy", "spinner", "both"].map((w) => training(w, 2)),
  training("slow", 45),
  // A Ray Data job has no step counter: its actors' gaps between calls are its data wait (target 85%).
  { ...training("embed-starved", 2), kind: "EmbeddingPipeline", plannedStepSeconds: undefined },
];

/** One worker's GPU: utilization and power. */
const gpuSeries = (p: string, utilization: string, powerWatts: string) => [
  series("DCGM_FI_DEV_GPU_UTIL", gpu(p), utilization),
  series("DCGM_FI_DEV_POWER_USAGE", gpu(p), powerWatts),
];

/** One training worker's counters: steps, seconds waiting for input, seconds of the loop's body. */
const loop = (workload: string, p: string, counts: { steps: string; wait: string; compute: string }) => {
  const labels = { ...pod(p), workload, rank: p.slice(-1) };
  return [
    series("ray_gpu_job_steps_total", labels, counts.steps),
    series("ray_gpu_job_input_wait_seconds_total", labels, counts.wait),
    series("ray_gpu_job_compute_seconds_total", labels, counts.compute),
  ];
};

/** A worker pod of the job, as kube-state-metrics reports it. */
const worker = (workload: string, p: string) =>
  series("kube_pod_labels", { ...pod(p), label_ray_gpu_io_workload: workload }, "1x60");

/** A loop that steps for 10 minutes (30 steps, 1 s of wait and 59 s of body a minute), then stops at minute 11. */
const STOPS_AT_10 = { steps: "0+30x10 300x50", wait: "0+1x10 10x50", compute: "0+59x10 590x50" };
/** A healthy loop: 28 steps a minute, 1 s of wait and 59 s of body. */
const STEPPING = { steps: "0+28x60", wait: "0+1x60", compute: "0+59x60" };

/** Two ranks; after minute 10 rank 0 spins in a collective at 100% and 70 W, rank 1 (the one missing) idles. */
const hungJob = (workload: string) => [
  worker(workload, `${workload}-w0`),
  worker(workload, `${workload}-w1`),
  ...gpuSeries(`${workload}-w0`, "95x10 100x50", "250x10 70x50"),
  ...gpuSeries(`${workload}-w1`, "95x10 0x50", "250x10 70x50"),
  ...loop(workload, `${workload}-w0`, STOPS_AT_10),
  ...loop(workload, `${workload}-w1`, STOPS_AT_10),
];

/** One worker with the given GPU and loop. */
const oneWorker = (workload: string, gpuValues: [string, string], counts: Parameters<typeof loop>[2]) => [
  worker(workload, `${workload}-w0`),
  ...gpuSeries(`${workload}-w0`, ...gpuValues),
  ...loop(workload, `${workload}-w0`, counts),
];

export const STATE_INPUT = [
  // hung: its last step ends at minute 10; stalled from 15, fires from 20
  ...hungJob("hung"),
  // the same hang with 45 s steps: stalled from minute 17 (7m30s), fires from 22
  ...hungJob("slow"),
  // idle: after minute 10 no kernel (0%), 60 W, no step and no wait ends; fires from 20
  ...oneWorker("idle", ["95x10 0x50", "250x10 60x50"], STOPS_AT_10),
  // starved: 40% busy, waiting 36 s of each minute for input (60%), still stepping
  ...oneWorker("starved", ["40x60", "120x60"], { steps: "0+12x60", wait: "0+36x60", compute: "0+24x60" }),
  // starved, not idle: GPUs nearly idle at idle power, but a step and its long wait still end every minute
  ...oneWorker("trickle", ["2x60", "60x60"], { steps: "0+1x60", wait: "0+57x60", compute: "0+3x60" }),
  // healthy: busy, drawing power, stepping, hardly waiting
  ...oneWorker("healthy", ["97x60", "250x60"], STEPPING),
  // hung-looking: 100% utilization at low power (a small, memory-bound kernel), but its steps advance
  ...oneWorker("spinner", ["100x60", "80x60"], STEPPING),
  // both hung and starved after minute 10 (a wait that ends every minute, no step): hung wins, starved stays silent
  worker("both", "both-w0"),
  worker("both", "both-w1"),
  ...gpuSeries("both-w0", "100x60", "70x60"),
  ...gpuSeries("both-w1", "0x60", "70x60"),
  ...loop("both", "both-w0", { steps: "0+30x10 300x50", wait: "0+54x60", compute: "0+6x60" }),
  // a Ray Data job whose GPU actors wait between calls 42 s of each minute (70%) at 30%
  worker("embed-starved", "embed-starved-w0"),
  ...gpuSeries("embed-starved-w0", "30x60", "90x60"),
  series(
    "ray_gpu_job_actor_idle_seconds_total",
    { ...pod("embed-starved-w0"), workload: "embed-starved", actor: "1" },
    "0+42x60",
  ),
  series(
    "ray_gpu_job_actor_busy_seconds_total",
    { ...pod("embed-starved-w0"), workload: "embed-starved", actor: "1" },
    "0+18x60",
  ),
];

/** An expected alert, with its labels and annotations as the rule expands them for the job and `$value`. */
export type Fires = (name: string, labels: Record<string, string>, value: string) => unknown;

/** The cases: at each moment every job fires at most one state, the one it is in. */
export function stateCases(fires: Fires) {
  const job = (workload: string) => ({ namespace: NS, workload });
  const hung = (w: string) => fires("RayGpuJobHung", job(w), "100");
  const starved = (w: string, value: string) => fires("RayGpuJobStarved", job(w), value);
  const starvedNow = [starved("starved", "60%"), starved("trickle", "95%"), starved("embed-starved", "70%")];
  return [
    { alertname: "RayGpuJobHung", eval_time: "25m", exp_alerts: [hung("hung"), hung("slow"), hung("both")] },
    { alertname: "RayGpuJobIdle", eval_time: "25m", exp_alerts: [fires("RayGpuJobIdle", job("idle"), "0")] },
    { alertname: "RayGpuJobStarved", eval_time: "25m", exp_alerts: starvedNow },
    // The last step ends at 10m: stalled from 15m, `for` 5m, so pending at 19m; `slow`, stalled from 17m (7m30s), is
    // still pending at 21m.
    { alertname: "RayGpuJobHung", eval_time: "19m", exp_alerts: [] },
    { alertname: "RayGpuJobIdle", eval_time: "19m", exp_alerts: [] },
    { alertname: "RayGpuJobHung", eval_time: "21m", exp_alerts: [hung("hung"), hung("both")] },
    // Before the hang nothing fires; starved waits 15 minutes.
    { alertname: "RayGpuJobHung", eval_time: "9m", exp_alerts: [] },
    { alertname: "RayGpuJobStarved", eval_time: "14m", exp_alerts: [] },
  ];
}
