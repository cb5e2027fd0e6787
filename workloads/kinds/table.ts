/**
 * Every workload kind and its strategy. Exhaustive: a new kind fails to compile until it has a strategy. Adding one
 * (say a RayService for online inference) means a schema in core/config/workloads/, its knobs and sections in the
 * contract, a folder here with its strategy, and a row in this table.
 */
import type { WorkloadKind } from "../../core/config/workloads";
import { BATCH_INFERENCE } from "./batch-inference/strategy";
import { EMBEDDING_PIPELINE } from "./embedding-pipeline/strategy";
import { LORA_FINE_TUNE } from "./lora-fine-tune/strategy";
import type { KindStrategy } from "./api/strategy";
import { TRAINING_JOB } from "./training-job/strategy";

export const KIND_STRATEGIES: { readonly [K in WorkloadKind]: KindStrategy<K> } = {
  TrainingJob: TRAINING_JOB,
  LoRAFineTune: LORA_FINE_TUNE,
  EmbeddingPipeline: EMBEDDING_PIPELINE,
  BatchInference: BATCH_INFERENCE,
};

/** The strategy of kind `kind`. */
export function strategyOf<K extends WorkloadKind>(kind: K): KindStrategy<K> {
  return KIND_STRATEGIES[kind];
}
