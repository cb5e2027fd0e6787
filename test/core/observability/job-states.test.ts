/**
 * The hung, starved and idle alerts' thresholds and which of them a job gets; their behaviour on series is
 * rules-promtool.test.ts's.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DATA_WAIT_COUNTERS,
  NEAR_IDLE_POWER_WATTS,
  STALL_ALERT_FLOOR_SECONDS,
  stallWindowSeconds,
  starvedDataWaitFraction,
} from "../../../core/observability/job-states";
import { METRICS } from "../../../core/observability/metrics";
import { STALL_STEPS } from "../../../core/reliability/interruption";
import { jobRuleGroup, type AlertRule, type JobAlertInput } from "../../../core/observability/rules";

const job = (over: Partial<JobAlertInput> = {}): JobAlertInput => ({
  workload: "llm-pretrain",
  namespace: "ray-jobs",
  kind: "TrainingJob",
  preRunningDeadlineSeconds: 2700,
  noSpillBecause: "nothing passes through the object store",
  ...over,
});
const alerts = (j: JobAlertInput) => jobRuleGroup(j).rules.filter((r): r is AlertRule => "alert" in r);
const alert = (j: JobAlertInput, name: string) => alerts(j).find((a) => a.alert === name)!;

describe("job states", () => {
  it.each([
    [0.5, 300],
    [2, 300],
    [30, 300],
    [45, 450],
    [3.25, 300],
    [120, 1200],
  ])("a %s s planned step stalls after %s s (10 steps, at least 5 minutes)", (step, seconds) => {
    expect(stallWindowSeconds(step)).toBe(seconds);
  });

  it("the stall window is never shorter than the floor nor than 10 planned steps", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.001, max: 1e5, noNaN: true }), (step) => {
        const w = stallWindowSeconds(step);
        return w >= STALL_ALERT_FLOOR_SECONDS && w >= STALL_STEPS * step && Number.isInteger(w);
      }),
    );
  });

  it.each([0, -2, Number.NaN, Number.POSITIVE_INFINITY])("refuses a planned step of %s s", (step) => {
    expect(() => stallWindowSeconds(step)).toThrow(
      `'plannedStepSeconds' (${step}) must be a positive number of seconds`,
    );
  });

  it("watches hung and idle only with a planned step time; starved always", () => {
    expect(alerts(job()).map((a) => a.alert)).toEqual([
      "RayGpuJobLowUtilization",
      "RayGpuJobSpilling",
      "RayGpuJobPendingTooLong",
      "RayGpuJobStarved",
    ]);
    expect(alerts(job({ plannedStepSeconds: 2 })).map((a) => a.alert)).toEqual([
      "RayGpuJobLowUtilization",
      "RayGpuJobSpilling",
      "RayGpuJobPendingTooLong",
      "RayGpuJobHung",
      "RayGpuJobIdle",
      "RayGpuJobStarved",
    ]);
  });

  it("names the job in every state alert's labels and summary", () => {
    for (const name of ["RayGpuJobHung", "RayGpuJobIdle", "RayGpuJobStarved"]) {
      const a = alert(job({ plannedStepSeconds: 2 }), name);
      expect(a.labels).toEqual({ severity: "warning", workload: "llm-pretrain" });
      expect(a.annotations.summary).toMatch(/^llm-pretrain: /);
    }
  });

  it("derives its thresholds: 100 W of the A10G's 300 W, the data wait a target leaves, the stall window", () => {
    expect(NEAR_IDLE_POWER_WATTS).toBe(100);
    expect([90, 85, 70].map(starvedDataWaitFraction)).toEqual([0.1, 0.15, 0.3]);
    const j = job({ plannedStepSeconds: 45, gpuUtilizationTargetPercent: 85 });
    expect(alert(j, "RayGpuJobHung").expr).toContain("ray_gpu:gpu_power_usage:watts");
    expect(alert(j, "RayGpuJobHung").expr).toContain("< 100) and on (namespace, workload)");
    expect(alert(j, "RayGpuJobHung").expr).toContain(
      'ray_gpu_job_steps_total{namespace="ray-jobs", workload="llm-pretrain"}[7m30s]',
    );
    expect(alert(j, "RayGpuJobStarved").expr).toMatch(/\) > 0\.15\) and on \(namespace, workload\) \(avg by/);
  });

  it("makes the states exclusive by construction: idle excludes hung, starved excludes both", () => {
    const j = job({ plannedStepSeconds: 2 });
    const hung = alert(j, "RayGpuJobHung").expr;
    const idle = alert(j, "RayGpuJobIdle").expr;
    expect(idle.endsWith(`unless on (namespace, workload) (${hung})`)).toBe(true);
    expect(alert(j, "RayGpuJobStarved").expr).toContain(`unless on (namespace, workload) (${hung}) unless`);
  });

  it("reads a training loop's wait for input and a Ray Data GPU actor's gaps between calls", () => {
    expect(DATA_WAIT_COUNTERS.TrainingJob).toMatchObject({
      waiting: METRICS.inputWaitSeconds,
      working: METRICS.computeSeconds,
    });
    expect(DATA_WAIT_COUNTERS.EmbeddingPipeline).toMatchObject({
      waiting: METRICS.actorIdleSeconds,
      working: METRICS.actorBusySeconds,
    });
    expect(alert(job({ kind: "BatchInference" }), "RayGpuJobStarved").expr).toContain(
      "ray_gpu_job_actor_idle_seconds_total",
    );
  });
});
