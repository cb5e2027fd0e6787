/**
 * Asks the memory planner about a workload: resolves the model, fills defaults the planner needs (sequence
 * length, image tokens) and returns one view of the result for every kind.
 */
import { resolveModel } from "../core/config/model-ref";
import type { WorkloadSpec } from "../core/config/workloads";
import { DecisionLog, type Decision } from "../core/decisions";
import { GPU_INSTANCES, usableGpuMemoryGiB } from "../core/catalog/instances";
import type { GpuPoolPlan } from "../core/pools";
import type { MemoryEstimate } from "../core/memory/estimate";
import { planTrainingMemory, type TrainingKnobs } from "../core/memory/plan-training";
import { planEmbeddingMemory, planServingMemory } from "../core/memory/plan-inference";
import type { ModelArchitecture } from "../core/models/types";
import { SMALL_ENCODER_PARAMETERS } from "./tuning/data";

/** Default tokens per training sample. */
export const DEFAULT_TRAINING_SEQUENCE_LENGTH = 2048;

/** What every kind's memory plan reports. */
export interface WorkloadMemoryPlan {
  readonly model: ModelArchitecture;
  readonly memory: MemoryEstimate;
  readonly fits: boolean;
  /** The chosen knobs (training: micro-batch, accumulation, ZeRO…; embedding: batch; inference: TP, concurrency). */
  readonly knobs: Readonly<Record<string, number | string | boolean>>;
  readonly decisions: readonly Decision[];
  readonly advice: readonly string[];
  /** BatchInference only. */
  readonly kvCacheBytesPerToken?: number;
  readonly maxConcurrentSequences?: number;
}

/** Plans memory for `spec` on one GPU of `pool`. */
export function planWorkloadMemory(spec: WorkloadSpec, pool: GpuPoolPlan): WorkloadMemoryPlan {
  const model = resolveModel(spec.model);
  const usableGiB = usableGpuMemoryGiB(pool.instanceType);
  const gpusPerNode = GPU_INSTANCES[pool.instanceType].gpus;
  const log = new DecisionLog();
  switch (spec.kind) {
    case "TrainingJob":
    case "LoRAFineTune": {
      const context = model.maxSequenceLength ?? model.maxPositionEmbeddings ?? DEFAULT_TRAINING_SEQUENCE_LENGTH;
      const sequenceLength = spec.sequenceLength ?? Math.min(DEFAULT_TRAINING_SEQUENCE_LENGTH, context);
      if (spec.sequenceLength === undefined) log.decide("sequenceLength", sequenceLength, `default ${DEFAULT_TRAINING_SEQUENCE_LENGTH} tokens, capped at the model's context (${context})`);
      const lora = spec.kind === "LoRAFineTune" ? spec.lora : undefined;
      let imageTokensPerSample: number | undefined;
      if (spec.kind === "LoRAFineTune" && model.vision) {
        const perSample = spec.images?.perSample ?? 1;
        const perImage = spec.images?.maxTokensPerImage ?? model.vision.defaultMaxImageTokens;
        imageTokensPerSample = perSample * perImage;
        log.decide("imageTokensPerSample", imageTokensPerSample, `${perSample} image(s) x ${perImage} tokens${model.vision.dynamicResolution ? " (one per 28x28 px after the 2x2 merge; cap the processor's max_pixels to keep this budget)" : ""}, added to the ${sequenceLength} text tokens`);
      }
      const plan = planTrainingMemory({
        model, gpus: spec.gpus, gpusPerNode, usableGiB, sequenceLength, globalBatchSize: spec.globalBatchSize,
        precision: spec.precision, optimizer: spec.optimizer, strategy: spec.kind === "TrainingJob" ? spec.strategy : "auto",
        microBatchSize: spec.microBatchSize, zeroStage: spec.zeroStage, offload: spec.offload, gradientCheckpointing: spec.gradientCheckpointing,
        lora: lora && { rank: lora.rank, targetModules: lora.targetModules, quantization: lora.quantization },
        imageTokensPerSample,
      });
      const knobs: Record<string, number | string | boolean> = { ...(plan.knobs satisfies TrainingKnobs), sequenceLength };
      if (lora) Object.assign(knobs, { loraRank: lora.rank, loraAlpha: lora.alpha ?? 2 * lora.rank, loraQuantization: lora.quantization });
      return { model, memory: plan.memory, fits: plan.fits, knobs, decisions: [...log.decisions, ...plan.decisions], advice: plan.advice };
    }
    case "EmbeddingPipeline": {
      const sequenceLength = spec.sequenceLength ?? model.maxSequenceLength ?? 512;
      if (spec.sequenceLength === undefined) log.decide("sequenceLength", sequenceLength, "the model's maximum sequence length");
      // A small encoder cannot keep an A10G busy from one process (it waits on batch assembly and host-to-device
      // copies): two actors share each GPU and overlap that work, each with half the memory.
      const actorsPerGpu = model.parameters < SMALL_ENCODER_PARAMETERS ? 2 : 1;
      log.decide("gpusPerActor", 1 / actorsPerGpu, actorsPerGpu > 1 ? `${(model.parameters / 1e6).toFixed(0)}M parameters < ${SMALL_ENCODER_PARAMETERS / 1e6}M: two actors per GPU overlap one's batch assembly with the other's compute; each plans with half the GPU` : `${(model.parameters / 1e6).toFixed(0)}M parameters: one actor keeps the GPU busy`);
      const plan = planEmbeddingMemory({ model, sequenceLength, batchSize: spec.batchSize, usableGiB: usableGiB / actorsPerGpu });
      return {
        model, memory: plan.memory, fits: plan.fits,
        knobs: { batchSize: plan.batchSize, sequenceLength, gpus: spec.gpus, gpusPerActor: 1 / actorsPerGpu },
        decisions: [...log.decisions, ...plan.decisions], advice: plan.advice,
      };
    }
    case "BatchInference": {
      const plan = planServingMemory({
        model, gpus: spec.gpus, gpusPerNode, maxPromptTokens: spec.maxPromptTokens, maxNewTokens: spec.maxNewTokens,
        gpuMemoryUtilization: spec.gpuMemoryUtilization, tensorParallelSize: spec.tensorParallelSize, usableGiB,
      });
      return {
        model, memory: plan.memory, fits: plan.fits,
        knobs: { tensorParallelSize: plan.tensorParallelSize, replicas: plan.replicas, gpuMemoryUtilization: plan.gpuMemoryUtilization, maxConcurrentSequences: plan.maxConcurrentSequences, gpus: spec.gpus, maxModelLength: spec.maxPromptTokens + spec.maxNewTokens, maxNewTokens: spec.maxNewTokens },
        decisions: plan.decisions, advice: plan.advice,
        kvCacheBytesPerToken: plan.kvCacheBytesPerToken, maxConcurrentSequences: plan.maxConcurrentSequences,
      };
    }
  }
}
