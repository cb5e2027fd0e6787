/**
 * Asks the training memory planner about a TrainingJob or LoRAFineTune: resolves the model, fills the defaults the
 * planner needs (sequence length, image tokens) and returns the typed knobs the job receives.
 */
import { resolveModel } from "../../../core/config/model-ref";
import type { LoRAFineTuneSpec, TrainingJobSpec } from "../../../core/config/workloads";
import { DecisionLog } from "../../../core/decisions";
import { defaultLoraTargets } from "../../../core/memory/lora";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import type { ModelArchitecture } from "../../../core/models/types";
import type { GpuPoolPlan } from "../../../core/pools";
import type { TrainingJobKnobs } from "../../contract/document";
import type { KindMemoryPlan } from "../api/plans";

/** Default tokens per training sample. */
export const DEFAULT_TRAINING_SEQUENCE_LENGTH = 2048;

/** The memory plan of a training kind, with the image tokens a vision-language sample adds. */
export interface TrainingMemory extends KindMemoryPlan<TrainingJobKnobs> {
  readonly imageTokensPerSample: number | undefined;
}

/** Tokens per sample: pinned, else the default capped at the model's context. */
function sequenceLength(spec: TrainingJobSpec | LoRAFineTuneSpec, model: ModelArchitecture, log: DecisionLog): number {
  if (spec.sequenceLength !== undefined) return spec.sequenceLength;
  const context = model.maxSequenceLength ?? model.maxPositionEmbeddings ?? DEFAULT_TRAINING_SEQUENCE_LENGTH;
  const reason = `default ${DEFAULT_TRAINING_SEQUENCE_LENGTH} tokens, capped at the model's context (${context})`;
  return log.decide("sequenceLength", Math.min(DEFAULT_TRAINING_SEQUENCE_LENGTH, context), reason);
}

/** Image tokens per sample of a vision-language fine-tune, or undefined for text models. */
function imageTokens(
  spec: TrainingJobSpec | LoRAFineTuneSpec,
  model: ModelArchitecture,
  text: number,
  log: DecisionLog,
): number | undefined {
  if (spec.kind !== "LoRAFineTune" || !model.vision) return undefined;
  const perSample = spec.images?.perSample ?? 1;
  const perImage = spec.images?.maxTokensPerImage ?? model.vision.defaultMaxImageTokens;
  const dynamic = model.vision.dynamicResolution
    ? " (one per 28x28 px after the 2x2 merge; cap the processor's max_pixels to keep this budget)"
    : "";
  return log.decide(
    "imageTokensPerSample",
    perSample * perImage,
    `${perSample} image(s) x ${perImage} tokens${dynamic}, added to the ${text} text tokens`,
  );
}

/** Plans memory and knobs for a training kind on one GPU of `pool`. */
export function planTrainingKindMemory(spec: TrainingJobSpec | LoRAFineTuneSpec, pool: GpuPoolPlan): TrainingMemory {
  const model = resolveModel(spec.model);
  const log = new DecisionLog();
  const seq = sequenceLength(spec, model, log);
  const imageTokensPerSample = imageTokens(spec, model, seq, log);
  const lora = spec.kind === "LoRAFineTune" ? spec.lora : undefined;
  const plan = planTrainingMemory({
    model,
    gpus: spec.gpus,
    gpusPerNode: pool.node.gpus,
    usableGiB: pool.node.usableGpuMemoryGiB,
    gpuName: pool.node.gpu,
    sequenceLength: seq,
    globalBatchSize: spec.globalBatchSize,
    precision: spec.precision,
    optimizer: spec.optimizer,
    strategy: spec.kind === "TrainingJob" ? spec.strategy : "auto",
    microBatchSize: spec.microBatchSize,
    zeroStage: spec.zeroStage,
    offload: spec.offload,
    gradientCheckpointing: spec.gradientCheckpointing,
    attention: spec.attention,
    loss: spec.loss,
    optimizerStep: spec.optimizerStep,
    lora: lora && {
      rank: lora.rank,
      targetModules: lora.targetModules ?? defaultLoraTargets(model),
      quantization: lora.quantization,
      dropout: lora.dropout,
      unquantizedPrecision: lora.unquantizedPrecision,
    },
    imageTokensPerSample,
  });
  const knobs: TrainingJobKnobs = { ...plan.knobs, sequenceLength: seq };
  return {
    model,
    memory: plan.memory,
    fits: plan.fits,
    knobs,
    decisions: [...log.decisions, ...plan.decisions],
    advice: plan.advice,
    imageTokensPerSample,
  };
}
