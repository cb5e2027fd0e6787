/**
 * Schemas of the entries of `ray-gpu:workloads`. The same schemas validate stack config, workload files given
 * to `ray-gpu plan --workload`, and TypeScript callers of the workload constructs. Fields only rendering needs
 * (`image`, `entrypoint`) are optional here so a workload can be planned before its image exists; rendering
 * reports them when missing.
 */
import { z } from "zod";
import type { WorkloadSpec } from "../types";
import { BatchInferenceSpecSchema, EmbeddingPipelineSpecSchema } from "./data";
import { LoRAFineTuneSpecSchema, TrainingJobSpecSchema } from "./training";

export { MAX_RAYJOB_NAME_LENGTH, MAX_SWEEP_SETTINGS } from "./base";
// The schemas are internal (zod stays out of the published declarations, docs/library.md): so are their re-exports.
/** @internal */
export { DatasetSchema } from "./base";
/** @internal */
export { BatchInferenceSpecSchema, EmbeddingPipelineSpecSchema } from "./data";
/** @internal */
export { ImagesSchema, LoraSchema, LoRAFineTuneSpecSchema, TrainingJobSpecSchema } from "./training";

/**
 * Any workload entry.
 * @internal
 */
export const WorkloadSpecSchema = z.discriminatedUnion("kind", [
  TrainingJobSpecSchema,
  LoRAFineTuneSpecSchema,
  EmbeddingPipelineSpecSchema,
  BatchInferenceSpecSchema,
]);

// The plain types of these schemas, generated from them (scripts/public-types): the public API's, without zod.
export type {
  BatchInferenceSpec,
  BatchInferenceSpecInput,
  EmbeddingPipelineSpec,
  EmbeddingPipelineSpecInput,
  LoRAFineTuneSpec,
  LoRAFineTuneSpecInput,
  TrainingJobSpec,
  TrainingJobSpecInput,
  WorkloadSpec,
  WorkloadSpecInput,
} from "../types";
/** The workload kinds: `TrainingJob`, `LoRAFineTune`, `EmbeddingPipeline`, `BatchInference`. */
export type WorkloadKind = WorkloadSpec["kind"];
