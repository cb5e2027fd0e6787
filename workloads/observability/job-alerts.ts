/**
 * What a job's alerts take from its plan: its utilization target, pre-running deadline, why nothing spills and its
 * planned step time.
 */
import type { WorkloadKind } from "../../core/config/workloads";
import type { JobAlertInput } from "../../core/observability/rules";
import { GIB } from "../../core/quantity";

/** The planned values a job's alerts read. */
export interface JobAlertFacts {
  readonly name: string;
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly preRunningDeadlineSeconds: number;
  /** Ray Data's planned working set (embedding and inference jobs); undefined for training. */
  readonly dataWorkingSetBytes: number | undefined;
  /** The planned utilization target, in %. */
  readonly gpuUtilizationTargetPercent: number;
  /** The planned seconds of one training step; undefined for a kind without a step counter (no hung or idle alert). */
  readonly plannedStepSeconds: number | undefined;
}

/** Why the plan expects no spilling, from its typed values. */
export function noSpillReason(dataWorkingSetBytes: number | undefined): string {
  if (dataWorkingSetBytes === undefined)
    return "the trainer passes no large objects through the object store (checkpoints go to storage)";
  return (
    `Ray Data's working set is ${(dataWorkingSetBytes / GIB).toFixed(2)} GiB, within its object-store limit ` +
    "(a plan whose working set would spill is refused)"
  );
}

/** The alert input of a planned job. */
export function jobAlertInput(f: JobAlertFacts): JobAlertInput {
  return {
    workload: f.name,
    namespace: f.namespace,
    kind: f.kind,
    gpuUtilizationTargetPercent: f.gpuUtilizationTargetPercent,
    preRunningDeadlineSeconds: f.preRunningDeadlineSeconds,
    noSpillBecause: noSpillReason(f.dataWorkingSetBytes),
    plannedStepSeconds: f.plannedStepSeconds,
  };
}
