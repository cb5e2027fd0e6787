/** What `ray-gpu tune` found and proposes. */
import type { Diagnosis } from "../../core/tune/diagnose";
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
  readonly diff: readonly string[];
  readonly expected: readonly Effect[];
  readonly written: boolean;
}
