/**
 * Two jobs of the prod stack as a real Prometheus would hold them over one hour, with the stack's recording rules:
 * llm-pretrain keeps its plan; embed-chunks runs for part of the hour only, at low utilization, and spills. The
 * `ray-gpu report` tests read them live, and scripts/record-report-sample.ts records the report of llm-pretrain from
 * them as the sample examples/report/ ships (so the live test's expectations hold for the sample too).
 */
import { stackRuleGroup } from "../../core/observability/rules";
import { jobSeries, type JobFixture } from "./job-metrics";
import { prometheusWith, type RunningPrometheus } from "./prometheus";

export const START = 1_767_225_600; // 2026-01-01T00:00:00Z
export const STEP = 60;
export const STEPS = 61;
/** The fixture's last sample: 2026-01-01T01:00:00Z. */
export const END = START + (STEPS - 1) * STEP;
export const GIB = 1024 ** 3;

/** prod's llm-pretrain: 4 workers x 8 GPUs on g5.48xlarge (its EFA pool); worker 3 at 80%, the rest at 97%. */
export const TRAIN: JobFixture = {
  namespace: "ray-jobs",
  workload: "llm-pretrain",
  workers: 4,
  gpusPerWorker: 8,
  steps: STEPS,
  utilization: (w) => (w === 3 ? 80 : 97),
  memoryUsedMiB: (_w, g) => 17000 + g * 100,
  rowsPerSecond: 0,
  spilledBytes: () => 0,
  telemetry: { waitShare: 0.03, samplesPerSecond: 96 },
};

/** prod's embed-chunks: 8 workers x 1 GPU on g5.2xlarge, alive from step 10 to 50, at 60%, spilling 1 GiB from step 30. */
export const EMBED: JobFixture = {
  namespace: "ray-jobs",
  workload: "embed-chunks",
  workers: 8,
  gpusPerWorker: 1,
  steps: STEPS,
  utilization: () => 60,
  memoryUsedMiB: () => 9000,
  rowsPerSecond: 2000,
  spilledBytes: (t) => (t >= 30 ? GIB : 0),
  alive: [10, 50],
};

/** The prod stack's recording rules (its namespace and scale-to-zero pool). */
export const prodRuleGroups = () => [
  stackRuleGroup({ namespace: "ray-jobs", scaleDownUnneededSeconds: 600, scaleToZeroPools: ["a10g"] }),
];

/** A real Prometheus holding both jobs' series and the rules evaluated over them. */
export function prodPrometheus(): Promise<RunningPrometheus> {
  return prometheusWith([...jobSeries(TRAIN, STEP), ...jobSeries(EMBED, STEP)], prodRuleGroups(), START, STEP);
}
