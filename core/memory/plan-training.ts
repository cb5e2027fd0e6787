/**
 * Chooses the training knobs that fit an A10G: plain DDP when the model states fit, then ZeRO 1, 2, 3, then
 * offload; gradient checkpointing only when needed; the largest micro-batch that keeps `requiredGiB` under the
 * usable memory with a safety margin; the chunked loss when it wins one of those; gradient accumulation that keeps
 * the global batch exactly. Pinned knobs are kept. When nothing fits, the plan says so with the numbers and the
 * ways out, each re-planned (./advice.ts).
 */
import { replannedAdvice } from "./advice";
import { DEFAULT_OPTIMIZER_STEP } from "./buffers";
import { searchKnobs } from "./knob-search";
import { LOSS_CHUNK_TOKENS } from "./loss";
import { trainingDecisions } from "./training-decisions";
import {
  accumulationSteps,
  type TrainingKnobs,
  type TrainingMemoryPlan,
  type TrainingRequest,
} from "./training-request";

/**
 * Plans the knobs of a training or fine-tuning job. `fits` means `requiredGiB` fits the usable memory; the
 * knobs are chosen to stay under the safety margin, and when no choice does, the plan says so and re-plans the ways
 * out (./advice.ts).
 */
export function planTrainingMemory(r: TrainingRequest): TrainingMemoryPlan {
  const { c, mem, found, attention } = searchKnobs(r);
  const steps = accumulationSteps(r, c);
  const knobs: TrainingKnobs = {
    microBatchSize: c.microBatchSize,
    gradientAccumulationSteps: steps,
    globalBatchSize: c.microBatchSize * steps * r.gpus,
    zeroStage: c.zeroStage,
    offload: c.offload,
    gradientCheckpointing: c.gradientCheckpointing,
    attentionImplementation: attention,
    loss: c.loss,
    lossChunkTokens: LOSS_CHUNK_TOKENS,
    optimizerStep: r.optimizerStep ?? DEFAULT_OPTIMIZER_STEP,
    gpus: r.gpus,
  };
  return {
    knobs,
    memory: mem,
    fits: mem.fits,
    decisions: trainingDecisions(r, knobs, mem, found),
    advice: mem.fits ? [] : replannedAdvice(r, mem),
  };
}
