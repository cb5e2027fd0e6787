/** Rules of the training kinds: the global batch must split evenly over GPUs and micro-batches, and sequences fit the model. */
import type { LoRAFineTuneSpec, TrainingJobSpec } from "../../../core/config/workloads";
import { resolveModel } from "../../../core/config/model-ref";
import type { IssueCollector } from "../../../core/errors";
import { checkContextLength } from "../shared/context-length";

/** The rules of a training spec: batch arithmetic, and a pinned sequence length within the model's context. */
export function checkTrainingSpec(
  spec: TrainingJobSpec | LoRAFineTuneSpec,
  path: string,
  issues: IssueCollector,
): void {
  checkBatchArithmetic(spec, path, issues);
  checkContextLength(
    resolveModel(spec.model),
    spec.sequenceLength,
    { path: `${path}.sequenceLength`, value: spec.sequenceLength },
    issues,
  );
}

/** The global batch splits evenly over GPUs, and the per-GPU share over micro-batches. */
export function checkBatchArithmetic(
  spec: TrainingJobSpec | LoRAFineTuneSpec,
  path: string,
  issues: IssueCollector,
): void {
  const { globalBatchSize: global, microBatchSize: micro, gpus } = spec;
  if (global === undefined) return;
  if (global % gpus !== 0) {
    const fix = Math.max(gpus, Math.round(global / gpus) * gpus);
    issues.add(
      `${path}.globalBatchSize`,
      `must be a multiple of gpus (${gpus}) so every GPU gets the same share; use ${fix}`,
      global,
    );
  } else if (micro !== undefined && (global / gpus) % micro !== 0) {
    issues.add(
      `${path}.microBatchSize`,
      `must divide the per-GPU batch ${global / gpus} (globalBatchSize ${global} / ${gpus} GPUs)`,
      micro,
    );
  }
}
