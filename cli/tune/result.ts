/** What `ray-gpu tune` found and proposes. */
import type { Recalibration } from "../../core/tune/forecast";
import type { Diagnosis } from "../../core/tune/model";
import type { Effect } from "./effects";

/** What `tune` found and proposes, as `--json` prints it. */
export interface TuneResult {
  readonly workload: string;
  readonly kind: string;
  readonly stack: string;
  readonly file: string;
  readonly entry: string;
  readonly recordedAt: string;
  readonly diagnosis: Diagnosis;
  /** The share of the run a stage's slots must be busy to bind it (`BOUND_SHARE`), for readers of `--json`. */
  readonly boundShare: number;
  readonly diff: readonly string[];
  readonly expected: readonly Effect[];
  readonly written: boolean;
  /** The plan's forecast of one run at the pace the run measured; null where the plan or the run has none. */
  readonly forecast: Recalibration | null;
}
