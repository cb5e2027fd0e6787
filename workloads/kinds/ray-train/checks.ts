/**
 * Rules of the training kinds: the global batch must split evenly over GPUs and micro-batches, sequences fit the model,
 * and a pinned transformers computes the loss the way the plan counts it.
 */
import type { LoRAFineTuneSpec, TrainingJobSpec } from "../../../core/config/workloads";
import { pipProject } from "../../../core/config/distinct";
import { pipVersion, versionBelow } from "../../../core/config/pip";
import { resolveModel } from "../../../core/config/model-ref";
import { hasCausalLmLoss } from "../../../core/memory/loss";
import type { IssueCollector } from "../../../core/errors";
import { checkContextLength } from "../shared/context-length";

/**
 * The rules of a training spec that hold whatever `gpus` is: the transformers pin, a sequence length within the model's
 * context. The batch arithmetic ({@link checkBatchArithmetic}) runs once the cluster shape accepts `gpus`.
 */
export function checkTrainingSpec(
  spec: TrainingJobSpec | LoRAFineTuneSpec,
  path: string,
  issues: IssueCollector,
): void {
  checkTransformersPin(spec, path, issues);
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

/**
 * The transformers release whose causal-LM loss stops copying the logits: huggingface/transformers#35646 (merged
 * 2025-01-13) pads the labels instead of slicing a shifted copy of the fp32 logits, so 4.48 and older keep 4 more
 * bytes per token per vocabulary entry than the plan counts (core/memory/loss.ts plans 5.18's loss).
 */
const LOSS_WITHOUT_LOGIT_COPY = { major: 4, minor: 49 } as const;

/** A pinned transformers that copies the logits for the loss is refused unless the chunked loss replaces it. */
export function checkTransformersPin(
  spec: TrainingJobSpec | LoRAFineTuneSpec,
  path: string,
  issues: IssueCollector,
): void {
  if (spec.loss === "chunked" || !hasCausalLmLoss(resolveModel(spec.model))) return;
  (spec.runtimeEnv?.pip ?? []).forEach((requirement, i) => {
    if (pipProject(requirement) !== "transformers") return;
    const version = pipVersion(requirement);
    if (!versionBelow(version, LOSS_WITHOUT_LOGIT_COPY)) return;
    const { major: wantMajor, minor: wantMinor } = LOSS_WITHOUT_LOGIT_COPY;
    issues.add(
      `${path}.runtimeEnv.pip[${i}]`,
      `transformers ${version} computes the loss on a shifted fp32 copy of the logits (before ` +
        `huggingface/transformers#35646, first released in ${wantMajor}.${wantMinor}), 4 bytes per token per ` +
        `vocabulary entry the memory plan does not count: pin transformers ${wantMajor}.${wantMinor} or later ` +
        `(the runtime is tested with 5.18.0), or set loss: chunked`,
      requirement,
    );
  });
}
