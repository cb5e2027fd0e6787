/**
 * The search over training knobs: every candidate (ZeRO stage and offload, checkpointing, micro-batch, loss) is
 * estimated, and the first that fits under the safety margin wins, in the order of ./plan-training.ts.
 */
import { largestBlockLinear, quantizedLinearParameters } from "../models";
import type { AttentionImplementation } from "../models/types";
import { attentionTraits, defaultAttention, scoreKernel } from "./attention";
import { communicationBytes, DEFAULT_OPTIMIZER_STEP, optimizerStepTemporaryBytes } from "./buffers";
import { estimateTraining, type MemoryEstimate } from "./estimate";
import { forwardWorkingSetBytesPerToken } from "./estimate-inference";
import { hasCausalLmLoss, type LossImplementation } from "./loss";
import { adapterParameters, largestAdapterTensor } from "./lora";
import type { LoraActivationInput } from "./activations";
import {
  fullTrainingStates,
  loraStates,
  MIXED_PRECISION,
  type Precision,
  trainableStatesIn16Bit,
  type ModelStates,
  type Offload,
  type UnquantizedPrecision,
  unquantizedPrecisionOf,
  type ZeroStage,
} from "./model-states";
import type { Candidate, TrainingRequest } from "./training-request";
import { accumulationSteps, MAX_FREE_MICRO_BATCH, SAFETY_MARGIN } from "./training-request";

/**
 * Forward working set of a frozen vision tower for one micro-batch, bytes: 16-bit, or bounded at 4 bytes per element
 * where QLoRA's upcast patch embedding and norms run the tower's stream in fp32.
 */
function visionBytes(r: TrainingRequest, c: Candidate, unquantized: UnquantizedPrecision): number {
  const v = r.model.vision;
  if (!v || !r.imageTokensPerSample) return 0;
  const bytes = unquantized === "fp32" ? 4 : 2;
  const perToken = forwardWorkingSetBytesPerToken(
    { hiddenSize: v.hiddenSize, intermediateSize: v.intermediateSize },
    bytes,
  );
  return c.microBatchSize * r.imageTokensPerSample * (v.dynamicResolution ? 4 : 1) * perToken;
}

/** Model states of one GPU and the parameters this GPU steps. */
function statesOf(
  r: TrainingRequest,
  c: Candidate,
  unquantized: UnquantizedPrecision,
): { states: ModelStates; trainable: number; stepped: number } {
  const m = r.model;
  if (r.lora) {
    const adapters = adapterParameters(m, r.lora.rank, r.lora.targetModules);
    const states = loraStates({
      parameters: m.parameters,
      quantizableParameters: quantizedLinearParameters(m),
      adapterParameters: adapters,
      precision: r.precision,
      optimizer: r.optimizer,
      quantization: r.lora.quantization,
      gpus: r.gpus,
      zeroStage: c.zeroStage,
      unquantizedPrecision: unquantized,
    });
    return { states, trainable: adapters, stepped: adapters };
  }
  const states = fullTrainingStates({
    parameters: m.parameters,
    largestLayerParameters: m.largestLayerParameters,
    gpus: r.gpus,
    gpusPerNode: r.gpusPerNode,
    precision: r.precision,
    optimizer: r.optimizer,
    zeroStage: c.zeroStage,
    offload: c.offload,
  });
  const stepped = c.offload !== "none" ? 0 : c.zeroStage === 0 ? m.parameters : m.parameters / r.gpus;
  return { states, trainable: m.parameters, stepped };
}

/**
 * What QLoRA's unquantized parameters train in for a request at a ZeRO stage (ZeRO casts them to 16 bit): the one
 * reading of the request's pin that the search, the plan's reasons and the rendered tuning document share.
 */
export function unquantizedOf(
  r: {
    readonly lora?: Pick<NonNullable<TrainingRequest["lora"]>, "quantization" | "unquantizedPrecision"> | undefined;
    readonly precision: Precision;
  },
  c: { readonly zeroStage: number },
): UnquantizedPrecision {
  return unquantizedPrecisionOf({
    quantization: r.lora?.quantization ?? "none",
    zeroStage: c.zeroStage,
    precision: r.precision,
    pinned: r.lora?.unquantizedPrecision,
  });
}

/**
 * What the adapters save for backward depends on their settings, on whether they compute in 16 bit, and on the dtype
 * of the residual stream between QLoRA's 4-bit layers.
 */
export function loraActivation(
  lora: Pick<NonNullable<TrainingRequest["lora"]>, "rank" | "targetModules" | "dropout">,
  precision: Precision,
  unquantizedPrecision: UnquantizedPrecision = "bf16",
): LoraActivationInput {
  return {
    rank: lora.rank,
    targetModules: lora.targetModules,
    dropout: lora.dropout,
    autocast: MIXED_PRECISION[precision],
    unquantizedPrecision,
  };
}

/**
 * Whether a step runs under CUDA's autocast over the weights as loaded: mixed precision on plain DDP (the runtime's
 * loop wraps each micro-batch in `torch.autocast`); under ZeRO, DeepSpeed's 16-bit engine casts the module instead.
 */
export const cudaAutocastOf = (precision: Precision, zeroStage: number): boolean =>
  MIXED_PRECISION[precision] && zeroStage === 0;

/** Memory of one configuration, with the attention it runs (the search's `attention`). */
export const trainingMemory = (r: TrainingRequest, c: Candidate): MemoryEstimate => configuredRun(r, c).mem;

/**
 * Whether the planner chooses the attention per step: the workload pins none, and SDPA would be PyTorch's math kernel
 * (Falcon-7B), which keeps fewer bytes per score than eager under autocast and more in pure 16 bit.
 */
export function attentionChosenPerStep(r: Pick<TrainingRequest, "attention" | "model">): boolean {
  const t = attentionTraits(r.model);
  return r.attention === undefined && t.implementations.includes("sdpa") && scoreKernel(t, "sdpa") === "math";
}

/**
 * The attention a configuration runs and its memory, each estimate made once. The attention is the pinned one; the
 * model's default; or, where it is chosen per step, whichever of eager and SDPA's math kernel the step needs less memory
 * for (eager on a tie: it multiplies in 16 bit).
 */
function configuredRun(r: TrainingRequest, c: Candidate): { attention: AttentionImplementation; mem: MemoryEstimate } {
  if (!attentionChosenPerStep(r)) {
    const attention = r.attention ?? defaultAttention(r.model);
    return { attention, mem: memoryWith(r, c, attention) };
  }
  const eager = memoryWith(r, c, "eager");
  const math = memoryWith(r, c, "sdpa");
  return math.requiredGiB < eager.requiredGiB ? { attention: "sdpa", mem: math } : { attention: "eager", mem: eager };
}

function memoryWith(r: TrainingRequest, c: Candidate, attention: AttentionImplementation): MemoryEstimate {
  const m = r.model;
  const unquantized = unquantizedOf(r, c);
  const { states, trainable, stepped } = statesOf(r, c, unquantized);
  // Optimizer states take the parameters' dtype: 16 bit only for pure bf16 full training (LoRA adapters stay fp32).
  const stateBytes = trainableStatesIn16Bit(r.precision, r.lora !== undefined) ? 2 : 4;
  const largestTensor = r.lora ? largestAdapterTensor(m, r.lora.rank, r.lora.targetModules) : m.largestLayerParameters;
  // Accumulating, every stage holds the gradients through the later micro-batches; on plain DDP backward also makes
  // each new gradient beside them (ZeRO reduces it through the buckets counted in the communication buffers).
  const accumulation = {
    largestGradientBytes: c.zeroStage === 0 ? (states.gradients / trainable) * largestTensor : 0,
  };
  return estimateTraining({
    model: m,
    states,
    precision: r.precision,
    microBatchSize: c.microBatchSize,
    tokensPerSample: r.sequenceLength + (r.imageTokensPerSample ?? 0),
    gradientCheckpointing: c.gradientCheckpointing,
    attention,
    loss: c.loss,
    ...(r.lora ? { lora: loraActivation(r.lora, r.precision, unquantized) } : {}),
    cudaAutocast: cudaAutocastOf(r.precision, c.zeroStage),
    gpus: r.gpus,
    communicationBytes: communicationBytes({
      zeroStage: c.zeroStage,
      gpus: r.gpus,
      ddpGradientBytes: states.gradients,
      trainableParameters: trainable,
      largestLayerParameters: m.largestLayerParameters,
    }),
    stepTemporaryBytes: optimizerStepTemporaryBytes(r.optimizerStep ?? DEFAULT_OPTIMIZER_STEP, {
      parameters: stepped,
      largestTensor,
      stateBytes,
    }),
    ...(accumulationSteps(r, c) > 1 ? { accumulation } : {}),
    visionBytes: visionBytes(r, c, unquantized),
    dequantizedWeightBytes: r.lora && r.lora.quantization !== "none" ? 2 * largestBlockLinear(m) : 0,
    usableGiB: r.usableGiB,
  });
}

/** Micro-batch sizes to try, largest first: divisors of the per-GPU batch, or powers of two up to 64. */
function microBatchCandidates(r: TrainingRequest): number[] {
  if (r.microBatchSize !== undefined) return [r.microBatchSize];
  if (r.globalBatchSize !== undefined) {
    const perGpu = r.globalBatchSize / r.gpus;
    const divisors = new Set<number>();
    for (let d = 1; d * d <= perGpu; d++) if (perGpu % d === 0) divisors.add(d).add(perGpu / d);
    return [...divisors].sort((a, b) => b - a);
  }
  const out: number[] = [];
  for (let mb = MAX_FREE_MICRO_BATCH; mb >= 1; mb /= 2) out.push(mb);
  return out;
}

/**
 * Whether the planner would pick a ZeRO stage that shards nothing: one GPU without offload. DeepSpeed would then only
 * add its engine (and, for QLoRA, cast the unquantized parameters to 16 bit, which `lora.unquantizedPrecision: bf16`
 * does without it). A pinned stage or `strategy: deepspeed` is kept.
 */
function shardsNothing(r: TrainingRequest, zeroStage: ZeroStage, offload: Offload): boolean {
  return r.gpus === 1 && zeroStage > 0 && offload === "none" && r.zeroStage === undefined && r.strategy === "auto";
}

/** (stage, offload) pairs in order of preference, limited by the strategy and pinned knobs. */
function stagesToTry(r: TrainingRequest): { zeroStage: ZeroStage; offload: Offload }[] {
  const stages: ZeroStage[] =
    r.zeroStage !== undefined
      ? [r.zeroStage]
      : r.strategy === "ddp"
        ? [0]
        : r.strategy === "deepspeed"
          ? [1, 2, 3]
          : r.lora?.quantization && r.lora.quantization !== "none"
            ? r.lora.unquantizedPrecision === "fp32"
              ? [0]
              : [0, 1, 2]
            : [0, 1, 2, 3];
  const out: { zeroStage: ZeroStage; offload: Offload }[] = [];
  // DeepSpeed offloads only its own CPU Adam; LoRA's small states gain nothing from offloading.
  const offloads =
    r.offload !== undefined
      ? [r.offload]
      : r.optimizer !== "adamw" || r.lora
        ? (["none"] as const)
        : (["none", "optimizer", "optimizer-and-parameters"] as const);
  for (const offload of offloads) {
    for (const zeroStage of stages) {
      if (shardsNothing(r, zeroStage, offload)) continue;
      if (offload === "optimizer" && zeroStage < 2) continue;
      if (offload === "optimizer-and-parameters" && zeroStage < 3) continue;
      out.push({ zeroStage, offload });
    }
  }
  return out;
}

/** Losses to try: the pinned one, else full and chunked for causal LMs (full wins ties: no recomputation). */
function lossesToTry(r: TrainingRequest): LossImplementation[] {
  if (r.loss !== undefined) return [r.loss];
  return hasCausalLmLoss(r.model) ? ["full", "chunked"] : ["full"];
}

/** A searched configuration and its memory. */
export interface SearchResult {
  readonly c: Candidate;
  readonly mem: MemoryEstimate;
  /** The attention `c` runs: where the planner chooses it per step, the leaner of eager and SDPA's math kernel. */
  readonly attention: AttentionImplementation;
  /** False when nothing stays under the planning margin (then `c` is the last try). */
  readonly found: boolean;
}

/**
 * Searches the knobs in order of preference: the lowest ZeRO stage and offload, then no checkpointing, then the
 * largest micro-batch. The chunked loss is chosen only where it wins one of these: a lower stage, no checkpointing,
 * or a larger micro-batch (fewer accumulation steps).
 */
export function searchKnobs(r: TrainingRequest): SearchResult {
  const target = r.usableGiB * (1 - SAFETY_MARGIN);
  const micros = microBatchCandidates(r);
  const ckpts = r.gradientCheckpointing !== undefined ? [r.gradientCheckpointing] : [false, true];
  const losses = lossesToTry(r);
  let last: Omit<SearchResult, "found"> | undefined;
  for (const s of stagesToTry(r)) {
    for (const gradientCheckpointing of ckpts) {
      let best: Omit<SearchResult, "found"> | undefined;
      for (const loss of losses) {
        for (const microBatchSize of micros) {
          const c = { ...s, gradientCheckpointing, microBatchSize, loss };
          const { attention, mem } = configuredRun(r, c);
          last = { c, mem, attention };
          if (mem.requiredGiB > target) continue;
          if (!best || microBatchSize > best.c.microBatchSize) best = { c, mem, attention };
          break;
        }
      }
      if (best) return { ...best, found: true };
    }
  }
  if (!last)
    throw new RangeError(
      "no ZeRO stage and offload combination to try: the pinned knobs exclude each other (the workload schema rejects this)",
    );
  return { ...last, found: false };
}
