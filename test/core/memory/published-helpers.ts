/** What the published-case tables share: the case shape, units and the planner calls they make. */
import { trainingMemory } from "../../../core/memory/knob-search";
import type { Candidate, TrainingRequest } from "../../../core/memory/training-request";
import { catalogModel } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";

/**
 * How a case is judged (tolerances in ./published-cases.ts): `capacity` is a KV cache's size in tokens, which the plan
 * may under-state a little (fewer concurrent sequences) but never over-state by more than 2%.
 */
export type Rule = "peak" | "reserved" | "gap" | "states" | "slope" | "estimator" | "lower-bound" | "capacity";

export interface PublishedCase {
  readonly id: string;
  readonly source: string;
  readonly what: string;
  readonly rule: Rule;
  readonly unit: "GiB" | "MB" | "MiB" | "GB" | "tokens";
  readonly measured: number;
  readonly predicted: () => number;
}

/** A published run a plan is judged against as a whole: it ran out of memory, or it fit. */
export interface PlannedRun {
  readonly id: string;
  readonly source: string;
  readonly plan: () => ReturnType<typeof trainingMemory>;
}

export const GIB = 2 ** 30;
export const UNIT_BYTES = { GiB: GIB, MB: 1e6, MiB: 2 ** 20, GB: 1e9 } as const;

/** A catalog model by its id, or an architecture as given. */
export const architectureOf = (model: string | ModelArchitecture): ModelArchitecture =>
  typeof model === "string" ? catalogModel(model)! : model;

/** A training request of a catalog model or an architecture (default: one GPU of 80 GiB, 2048 tokens, pure bf16, AdamW). */
export function trainingRequest(model: string | ModelArchitecture, r: Partial<TrainingRequest> = {}): TrainingRequest {
  return {
    model: architectureOf(model),
    gpus: 1,
    gpusPerNode: 1,
    usableGiB: 80,
    sequenceLength: 2048,
    precision: "bf16-true",
    optimizer: "adamw",
    strategy: "ddp",
    ...r,
  };
}

/** Training memory of one candidate of {@link trainingRequest}. */
export function train(
  model: string | ModelArchitecture,
  r: Partial<TrainingRequest>,
  c: Candidate,
): ReturnType<typeof trainingMemory> {
  return trainingMemory(trainingRequest(model, r), c);
}

/** A single-GPU candidate: plain DDP, no offload or checkpointing, full loss. */
export const single = (microBatchSize: number, over: Partial<Candidate> = {}): Candidate => ({
  zeroStage: 0,
  offload: "none",
  gradientCheckpointing: false,
  microBatchSize,
  loss: "full",
  ...over,
});
