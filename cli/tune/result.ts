/** What `ray-gpu tune` found and proposes. */
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
}
