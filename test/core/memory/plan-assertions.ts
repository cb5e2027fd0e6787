/** What every training plan must hold, whatever the request (the planners' properties share it). */
import { expect } from "vitest";
import type { TrainingMemoryPlan } from "../../../core/memory/training-request";

/**
 * A plan fits within the GPU's `usableGiB` or gives advice, and its reasons agree with its verdict: a plan that does not
 * fit never says its states or batch fit, and one that fits never says nothing does.
 */
export function expectPlanAgreesWithItself(p: TrainingMemoryPlan, usableGiB: number): void {
  if (p.fits) expect(p.memory.requiredGiB).toBeLessThanOrEqual(usableGiB);
  else expect(p.advice.length).toBeGreaterThan(0);
  const reasons = p.decisions.map((d) => d.reason).join("\n");
  if (p.fits) expect(reasons).not.toMatch(/nothing fits on|it does not fit/);
  else expect(reasons).not.toMatch(/fit on each GPU|the states fit on the GPUs|largest that fits/);
}
