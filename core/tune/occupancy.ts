/**
 * How busy each Ray Data stage of a run was: the busiest operator of each stage, its busy seconds as a share of its
 * slots' time over the run. A share, so the same stage comes out busiest on a quiet machine and on a loaded one,
 * where every stage slows alike; and a stage binds the run only when its share reaches `BOUND_SHARE`.
 */
import type { DataStage, RunRecord } from "./run-record";
import { BOUND_SHARE } from "./model";
import { pct } from "./words";

/** A stage's busiest operator over the run. */
export interface StageBusy {
  readonly share: number;
  readonly operator: string;
  readonly slots: number;
}

/** The stages that take part in the pipeline's pace, in the order their lines are shown. */
export const PIPELINE_STAGES = ["read", "preprocess", "gpu"] as const;

/** Each Ray Data stage's busiest operator: its share of the run busy, per slot. */
export function occupancy(record: RunRecord): Partial<Record<DataStage, StageBusy>> {
  const data = record.data;
  if (!data) return {};
  const out: Partial<Record<DataStage, StageBusy>> = {};
  for (const op of data.operators) {
    const share = Math.min(1, op.busySeconds / (op.slots * data.wallSeconds));
    if (share >= (out[op.stage]?.share ?? -1)) out[op.stage] = { share, operator: op.name, slots: op.slots };
  }
  return out;
}

/** The pipeline stage (read, preprocess, gpu) whose slots are busiest, bound or not. */
export function busiest(record: RunRecord): DataStage | undefined {
  const o = occupancy(record);
  const stages = PIPELINE_STAGES.filter((s) => o[s] !== undefined);
  return stages.reduce<DataStage | undefined>(
    (best, s) => (best && o[best]!.share >= o[s]!.share ? best : s),
    undefined,
  );
}

/** The busiest pipeline stage when its share shows it bound the run (`BOUND_SHARE`); none otherwise. */
export function bottleneck(record: RunRecord): DataStage | undefined {
  const stage = busiest(record);
  return stage !== undefined && occupancy(record)[stage]!.share >= BOUND_SHARE ? stage : undefined;
}

/** "MapBatches(Tokenize): 1 slot busy 97% of the 51.8 s run" */
export function busyLine(record: RunRecord, stage: DataStage): string | undefined {
  const o = occupancy(record)[stage];
  if (!o) return undefined;
  const slots = `${o.slots} ${o.slots === 1 ? "slot" : "slots"}`;
  return `${o.operator}: ${slots} busy ${pct(o.share)} of the ${record.data!.wallSeconds.toFixed(1)} s run`;
}

/** The evidence of a healthy data run no stage bound: every stage's share, and where the rest of the run went. */
export function unboundEvidence(record: RunRecord, shortRunSeconds: number): string[] {
  const lines = [`no stage was busy enough to bind the run (a stage binds at ${pct(BOUND_SHARE)} of its slots' time):`];
  for (const stage of PIPELINE_STAGES) {
    const line = busyLine(record, stage);
    if (line) lines.push(`  ${line}`);
  }
  lines.push(
    "the rest went to what no stage counts: starting the actors (each loads its model), the first blocks, " +
      "and waiting between stages",
  );
  const wall = record.data!.wallSeconds;
  if (wall < shortRunSeconds)
    lines.push(
      `the run lasted ${wall.toFixed(1)} s, under ${shortRunSeconds} s: start-up weighs on a run this short; ` +
        "tune the record of a longer run to see its steady state",
    );
  return lines;
}
