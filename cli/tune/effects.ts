/** The planned values a re-plan changes, named as `ray-gpu plan` shows them. */
import { gib, mib } from "../../core/tune/words";
import type { WorkloadPlan } from "../../workloads/workload";

/** One planned value before and after the re-plan, in its unit. */
export interface Effect {
  readonly key: string;
  readonly before: string;
  readonly after: string;
}

const count = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"}`;

/** The values a tune change can move, each with how it reads. */
function plannedValues(plan: WorkloadPlan): Record<string, string> {
  const out: Record<string, string> = { "memory.requiredGiB": `${plan.memory.memory.requiredGiB} GiB` };
  if (plan.tuning.engine === "ray-data") {
    const { pool, data } = plan.tuning.data;
    out["actorPool.preprocessConcurrency"] = count(pool.preprocessConcurrency, "task");
    out["actorPool.batchSize"] = count(pool.batchSize, "row");
    out["data.blockSizeBytes"] = mib(data.blockSizeBytes);
    out["data.workingSetBytes"] = gib(data.workingSetBytes);
  }
  const knobs: object = plan.memory.knobs;
  for (const k of ["microBatchSize", "gradientAccumulationSteps"] as const)
    if (k in knobs) out[`knobs.${k}`] = String((knobs as Record<string, number>)[k]);
  return out;
}

/** Every planned value that differs between two plans of one workload. */
export function expectedEffects(before: WorkloadPlan, after: WorkloadPlan): Effect[] {
  const a = plannedValues(before);
  const b = plannedValues(after);
  return Object.keys(a)
    .filter((k) => a[k] !== b[k])
    .map((key) => ({ key, before: a[key]!, after: b[key]! }));
}
