import { describe, expect, it } from "vitest";
import {
  aboutSeconds,
  lostWorkText,
  LOST_WORK_TARGET_MINUTES,
  MAX_CHECKPOINT_OVERHEAD,
  planInterruptions,
  secondsText,
  SPOT_WORKER_GRACE_SECONDS,
  STALL_FLOOR_SECONDS,
  type InterruptionInput,
} from "../../../core/reliability/interruption";

/** Llama-3.2-1B-like full training on one g5.12xlarge (4 GPUs, 40 Gbps): steps of 7.4 s, as the forecast plans them. */
const base: InterruptionInput = {
  stepSeconds: 7.4,
  checkpointBytes: 1.2e9 * 12,
  gpus: 4,
  writerNodes: 1,
  networkBaselineMbps: 40_000,
  spot: true,
};

describe("planInterruptions", () => {
  it("on spot, checkpoints often enough to lose at most the spot target without notice", () => {
    const p = planInterruptions(base);
    expect(p.checkpointEverySteps * p.stepSeconds).toBeLessThanOrEqual(LOST_WORK_TARGET_MINUTES.spot * 60);
    expect(p.lostWithoutNotice.steps).toBe(p.checkpointEverySteps);
  });

  it("on spot, bounds a noticed interruption by the step in flight when the step and its checkpoint fit the grace", () => {
    const p = planInterruptions(base);
    expect(p.stepSeconds + p.checkpointWriteSeconds).toBeLessThan(SPOT_WORKER_GRACE_SECONDS);
    expect(p.lostWithNotice).toEqual({ steps: 1, gpuMinutes: expect.any(Number) });
  });

  it("says the notice checkpoint does not fit when a step outlasts the notice", () => {
    const p = planInterruptions({ ...base, stepSeconds: base.stepSeconds * 20 });
    expect(p.noticeCheckpointFits).toBe(false);
    expect(p.lostWithNotice).toBeUndefined();
  });

  it("on-demand keeps a longer cadence and no notice checkpoint", () => {
    const spot = planInterruptions(base);
    const onDemand = planInterruptions({ ...base, spot: false });
    expect(onDemand.checkpointEverySteps).toBeGreaterThan(spot.checkpointEverySteps);
    expect(onDemand.lostWithNotice).toBeUndefined();
  });

  it("checkpoints less often than the target when writing that often would cost too much", () => {
    const p = planInterruptions({ ...base, checkpointBytes: 1e13 });
    expect(p.checkpointWriteSeconds / (p.checkpointEverySteps * p.stepSeconds)).toBeLessThanOrEqual(
      MAX_CHECKPOINT_OVERHEAD,
    );
    expect(p.whyCadence).toMatch(/would spend over 5% of the run writing/);
  });

  it("never lets the stall window fall below the restart floor", () => {
    expect(planInterruptions(base).stallAfterSeconds).toBe(STALL_FLOOR_SECONDS);
    const slow = planInterruptions({ ...base, stepSeconds: base.stepSeconds * 100 });
    expect(slow.stallAfterSeconds).toBeGreaterThan(STALL_FLOOR_SECONDS);
  });
});

describe("times and lost work in the reasons", () => {
  it("prints no quantity that rounds to zero", () => {
    expect([0, 0.004, 0.049, 0.05, 0.94, 9.96, 12.4].map(secondsText)).toEqual([
      "<0.1",
      "<0.1",
      "<0.1",
      "0.1",
      "0.9",
      "10",
      "12",
    ]);
    expect([0, 0.049, 0.05, 5.9].map(aboutSeconds)).toEqual([
      "under 0.1 s",
      "under 0.1 s",
      "about 0.1 s",
      "about 5.9 s",
    ]);
  });

  it("says a small LoRA adapter's checkpoint takes under 0.1 s to write, and its step under 0.1 GPU-min", () => {
    // 8 MB of adapters and their states over 40 Gbps take milliseconds; a step of 4k tokens on 4 GPUs, a quarter second.
    const p = planInterruptions({ ...base, checkpointBytes: 2e6 * 4, stepSeconds: 0.25 });
    expect(p.checkpointWriteSeconds).toBeLessThan(0.05);
    expect(p.whyCadence).toMatch(/a checkpoint under 0\.1 s to write\)$/);
    expect(p.whyCadence).not.toMatch(/0\.0 s/);
    expect(p.lostWithNotice?.gpuMinutes).toBe(0);
    expect(lostWorkText(p, true)).toMatch(
      /^a spot interruption loses at most the step in flight, under 0\.1 GPU-min: /,
    );
  });
});
