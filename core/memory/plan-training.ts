/**
 * Chooses the training knobs that fit an A10G: plain DDP when the model states fit, then ZeRO 1, 2, 3, then
 * offload; gradient checkpointing only when needed; the largest micro-batch that keeps `requiredGiB` under the
 * usable memory with a safety margin; gradient accumulation that keeps the global batch exactly. Pinned knobs
 * are kept. When nothing fits, the plan says so with the numbers and the ways out.
 */
import { DecisionLog, type Decision } from "../decisions";
import type { ModelArchitecture } from "../models/types";
import { blockLinearParameters } from "../models";
import { estimateTraining, forwardWorkingSetBytesPerToken, type MemoryEstimate } from "./estimate";
import { adapterParameters, type LoraTarget } from "./lora";
import { DEEPSPEED_BUCKET_BYTES } from "./deepspeed";
import {
  fullTrainingStates,
  loraStates,
  type Offload,
  type Optimizer,
  type Precision,
  type Quantization,
  type ZeroStage,
} from "./model-states";

/** Share of usable memory the planner keeps free when it picks knobs. */
export const SAFETY_MARGIN = 0.05;
/** Largest micro-batch tried when no global batch is given. */
export const MAX_FREE_MICRO_BATCH = 64;

/** What a training workload asks for; undefined knobs are the planner's to choose. */
export interface TrainingRequest {
  readonly model: ModelArchitecture;
  readonly gpus: number;
  readonly gpusPerNode: number;
  readonly usableGiB: number;
  readonly sequenceLength: number;
  readonly globalBatchSize?: number | undefined;
  readonly precision: Precision;
  readonly optimizer: Optimizer;
  readonly strategy: "ddp" | "deepspeed" | "auto";
  readonly microBatchSize?: number | undefined;
  readonly zeroStage?: ZeroStage | undefined;
  readonly offload?: Offload | undefined;
  readonly gradientCheckpointing?: boolean | undefined;
  readonly lora?:
    | { readonly rank: number; readonly targetModules: readonly LoraTarget[]; readonly quantization: Quantization }
    | undefined;
  /** Image tokens per sample (vision-language models). */
  readonly imageTokensPerSample?: number | undefined;
}

/** The chosen knobs. */
export interface TrainingKnobs {
  readonly microBatchSize: number;
  readonly gradientAccumulationSteps: number;
  readonly globalBatchSize: number;
  readonly zeroStage: ZeroStage;
  readonly offload: Offload;
  readonly gradientCheckpointing: boolean;
  readonly gpus: number;
}

/** A training memory plan. */
export interface TrainingMemoryPlan {
  readonly knobs: TrainingKnobs;
  readonly memory: MemoryEstimate;
  readonly fits: boolean;
  readonly decisions: readonly Decision[];
  /** When nothing fits: the ways out, with numbers. */
  readonly advice: readonly string[];
}

interface Candidate {
  zeroStage: ZeroStage;
  offload: Offload;
  gradientCheckpointing: boolean;
  microBatchSize: number;
}

/** Memory of one configuration. */
export function trainingMemory(r: TrainingRequest, c: Candidate): MemoryEstimate {
  const m = r.model;
  const tokensPerSample = r.sequenceLength + (r.imageTokensPerSample ?? 0);
  const vision =
    m.vision && r.imageTokensPerSample
      ? c.microBatchSize *
        r.imageTokensPerSample *
        (m.vision.dynamicResolution ? 4 : 1) *
        forwardWorkingSetBytesPerToken({ hiddenSize: m.vision.hiddenSize, intermediateSize: m.vision.intermediateSize })
      : 0;
  if (r.lora) {
    const adapters = adapterParameters(m, r.lora.rank, r.lora.targetModules);
    const states = loraStates({
      parameters: m.parameters,
      quantizableParameters: blockLinearParameters(m),
      adapterParameters: adapters,
      precision: r.precision,
      optimizer: r.optimizer,
      quantization: r.lora.quantization,
      gpus: r.gpus,
      zeroStage: c.zeroStage,
    });
    return estimateTraining({
      model: m,
      states,
      precision: r.precision,
      microBatchSize: c.microBatchSize,
      tokensPerSample,
      gradientCheckpointing: c.gradientCheckpointing,
      lora: { rank: r.lora.rank, targetModules: r.lora.targetModules },
      gpus: r.gpus,
      ddpBuckets: c.zeroStage === 0 && r.gpus > 1,
      trainableLocalParameters: adapters,
      visionBytes: vision,
      usableGiB: r.usableGiB,
    });
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
  const trainableLocal = c.offload !== "none" ? 0 : c.zeroStage === 0 ? m.parameters : m.parameters / r.gpus;
  // ZeRO's double-buffered reduce buckets live next to the gradients.
  const withBuckets = c.zeroStage >= 1 ? { ...states, gradients: states.gradients + DEEPSPEED_BUCKET_BYTES } : states;
  return estimateTraining({
    model: m,
    states: withBuckets,
    precision: r.precision,
    microBatchSize: c.microBatchSize,
    tokensPerSample,
    gradientCheckpointing: c.gradientCheckpointing,
    gpus: r.gpus,
    ddpBuckets: c.zeroStage === 0 && r.gpus > 1,
    trainableLocalParameters: trainableLocal,
    visionBytes: vision,
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
            ? [0, 1, 2]
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
      if (offload === "optimizer" && zeroStage < 2) continue;
      if (offload === "optimizer-and-parameters" && zeroStage < 3) continue;
      out.push({ zeroStage, offload });
    }
  }
  return out;
}

/** Searches the knobs in order of preference; `found` is false when nothing fits (then the last try). */
function searchKnobs(r: TrainingRequest): { c: Candidate; mem: MemoryEstimate; found: boolean } {
  const target = r.usableGiB * (1 - SAFETY_MARGIN);
  const micros = microBatchCandidates(r);
  const ckpts = r.gradientCheckpointing !== undefined ? [r.gradientCheckpointing] : [false, true];
  let chosen: { c: Candidate; mem: MemoryEstimate } | undefined;
  let last: { c: Candidate; mem: MemoryEstimate } | undefined;
  search: for (const s of stagesToTry(r)) {
    for (const gradientCheckpointing of ckpts) {
      for (const microBatchSize of micros) {
        const c = { ...s, gradientCheckpointing, microBatchSize };
        const mem = trainingMemory(r, c);
        last = { c, mem };
        if (mem.requiredGiB <= target) {
          chosen = { c, mem };
          break search;
        }
      }
    }
  }
  if (!last)
    throw new RangeError(
      "no ZeRO stage and offload combination to try: the pinned knobs exclude each other (the workload schema rejects this)",
    );
  const pick = chosen ?? last;
  return { ...pick, found: chosen !== undefined };
}

/**
 * Plans the knobs of a training or fine-tuning job. `fits` means `requiredGiB` fits the usable memory; the
 * knobs are chosen to stay under the safety margin, and when no choice does, the plan says so.
 */
export function planTrainingMemory(r: TrainingRequest): TrainingMemoryPlan {
  const { c, mem, found } = searchKnobs(r);
  return describe(r, c, mem, found, r.usableGiB * (1 - SAFETY_MARGIN));
}

function describe(
  r: TrainingRequest,
  c: Candidate,
  mem: MemoryEstimate,
  found: boolean,
  target: number,
): TrainingMemoryPlan {
  const log = new DecisionLog();
  const perGpu = r.globalBatchSize !== undefined ? r.globalBatchSize / r.gpus : c.microBatchSize;
  const accumulation = perGpu / c.microBatchSize;
  const pinned = (v: unknown) => v !== undefined;
  const req =
    `requires ${mem.requiredGiB} GiB of ${r.usableGiB} GiB (target ${target.toFixed(2)} GiB with a ${SAFETY_MARGIN * 100}% ` +
    `margin)`;
  log.decide(
    "zeroStage",
    c.zeroStage,
    pinned(r.zeroStage)
      ? "pinned by the workload"
      : c.zeroStage === 0
        ? `plain DDP: full model states (${mem.breakdownGiB.modelStates} GiB) fit on each GPU`
        : `ZeRO-${c.zeroStage}: the lowest stage whose per-GPU model states (${mem.breakdownGiB.modelStates} ` +
          `GiB) leave room for activations`,
  );
  log.decide(
    "offload",
    c.offload,
    pinned(r.offload)
      ? "pinned by the workload"
      : c.offload === "none"
        ? "no offload: the states fit on the GPUs"
        : `offload to CPU needed; the node must hold ${mem.cpuOffloadGiBPerNode} GiB (DeepSpeed's estimate)`,
  );
  log.decide(
    "gradientCheckpointing",
    c.gradientCheckpointing,
    pinned(r.gradientCheckpointing)
      ? "pinned by the workload"
      : c.gradientCheckpointing
        ? "needed: without it even micro-batch 1 does not fit; recomputation keeps only each layer's input"
        : "not needed: activations fit, so no recomputation cost",
  );
  log.decide(
    "microBatchSize",
    c.microBatchSize,
    pinned(r.microBatchSize) ? `pinned by the workload; ${req}` : `largest that fits: ${req}`,
  );
  log.decide(
    "gradientAccumulationSteps",
    accumulation,
    r.globalBatchSize !== undefined
      ? `global batch ${r.globalBatchSize} = ${c.microBatchSize} micro-batch x ${accumulation} steps x ${r.gpus} ` +
          `GPUs, kept exactly whatever the GPU count`
      : "no globalBatchSize given: one micro-batch per step",
  );
  if (!found && mem.fits)
    log.decide(
      "safetyMargin",
      false,
      `no choice stays under the ${SAFETY_MARGIN * 100}% planning margin; the closest (${mem.requiredGiB} ` +
        `GiB) still fits the ${r.usableGiB} GiB, with little room for allocator fragmentation`,
    );
  const advice = mem.fits ? [] : adviceFor(r, c, mem);
  return {
    knobs: {
      microBatchSize: c.microBatchSize,
      gradientAccumulationSteps: accumulation,
      globalBatchSize: perGpu * r.gpus,
      zeroStage: c.zeroStage,
      offload: c.offload,
      gradientCheckpointing: c.gradientCheckpointing,
      gpus: r.gpus,
    },
    memory: mem,
    fits: mem.fits,
    decisions: log.decisions,
    advice,
  };
}

function adviceFor(r: TrainingRequest, c: Candidate, mem: MemoryEstimate): string[] {
  const out = [
    `does not fit: needs ${mem.requiredGiB} GiB per GPU (model states ${mem.breakdownGiB.modelStates} ` +
      `GiB, activations ${mem.breakdownGiB.activations} GiB, logits ${mem.breakdownGiB.logits} GiB) but ` +
      `an A10G offers ${r.usableGiB} GiB`,
  ];
  const free: TrainingRequest = {
    ...r,
    microBatchSize: 1,
    globalBatchSize: undefined,
    zeroStage: undefined,
    offload: undefined,
    gradientCheckpointing: undefined,
    strategy: r.strategy === "ddp" && !r.lora ? "ddp" : "auto",
  };
  for (const gpus of [2, 4, 8, 16, 32, 64].filter((g) => g > r.gpus)) {
    if (planFits({ ...free, gpus })) {
      out.push(`use ${gpus} GPUs${free.strategy === "ddp" ? "" : " (ZeRO shards the states)"}`);
      break;
    }
  }
  if (r.lora && r.lora.quantization === "none" && planFits({ ...free, lora: { ...r.lora, quantization: "nf4" } }))
    out.push('use QLoRA: lora.quantization: "nf4"');
  for (let seq = Math.floor(r.sequenceLength / 2); seq >= 128; seq = Math.floor(seq / 2)) {
    if (planFits({ ...free, sequenceLength: seq })) {
      out.push(`use a shorter sequence: sequenceLength ${seq}`);
      break;
    }
  }
  if (c.offload !== "none" || r.offload !== undefined)
    out.push("offloading needs host memory: a larger g5 size (g5.24xlarge or g5.48xlarge) has more RAM per GPU");
  return out;
}

function planFits(r: TrainingRequest): boolean {
  return searchKnobs(r).found;
}
