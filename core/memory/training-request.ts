/** What a training workload asks the memory planner for, and the knobs the planner chooses. */
import type { Decision } from "../decisions";
import type { OptimizerStep } from "./buffers";
import type { AttentionImplementation, ModelArchitecture } from "../models/types";
import type { MemoryEstimate } from "./estimate";
import type { LossImplementation } from "./loss";
import type { LoraTarget } from "./lora";
import type { Offload, Optimizer, Precision, Quantization, UnquantizedPrecision, ZeroStage } from "./model-states";

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
  /**
   * The GPU `usableGiB` is of, as the advice names it (`A10G`, `L4`, `L40S`).
   * @default - "GPU"
   */
  readonly gpuName?: string | undefined;
  readonly sequenceLength: number;
  readonly globalBatchSize?: number | undefined;
  readonly precision: Precision;
  readonly optimizer: Optimizer;
  readonly strategy: "ddp" | "deepspeed" | "auto";
  readonly microBatchSize?: number | undefined;
  readonly zeroStage?: ZeroStage | undefined;
  readonly offload?: Offload | undefined;
  readonly gradientCheckpointing?: boolean | undefined;
  /** @default - the model's default (sdpa where supported, else eager) */
  readonly attention?: AttentionImplementation | undefined;
  /** @default - chunked when it helps (see `searchKnobs` in ./knob-search), else full */
  readonly loss?: LossImplementation | undefined;
  /** @default "fused" (what the runtime constructs; see ./buffers) */
  readonly optimizerStep?: OptimizerStep | undefined;
  readonly lora?:
    | {
        readonly rank: number;
        readonly targetModules: readonly LoraTarget[];
        readonly quantization: Quantization;
        /** PEFT's `lora_dropout` (each adapter then keeps a mask of its input). */
        readonly dropout: number;
        /**
         * What QLoRA's unquantized parameters train in, where pinned; `fp32` keeps the plan at ZeRO 0 (DeepSpeed would
         * cast them to 16 bit).
         * @default - see `unquantizedPrecisionOf` in ./model-states
         */
        readonly unquantizedPrecision?: UnquantizedPrecision | undefined;
      }
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
  readonly attentionImplementation: AttentionImplementation;
  readonly loss: LossImplementation;
  /** Tokens scored at once by the chunked loss (the runtime reads it). */
  readonly lossChunkTokens: number;
  /** How the optimizer steps (the runtime constructs it so). */
  readonly optimizerStep: OptimizerStep;
  readonly gpus: number;
}

/** A training memory plan. */
export interface TrainingMemoryPlan {
  readonly knobs: TrainingKnobs;
  readonly memory: MemoryEstimate;
  readonly fits: boolean;
  readonly decisions: readonly Decision[];
  /** When nothing fits: the ways out, each re-planned, with numbers. */
  readonly advice: readonly string[];
}

/** One configuration the search evaluates. */
export interface Candidate {
  readonly zeroStage: ZeroStage;
  readonly offload: Offload;
  readonly gradientCheckpointing: boolean;
  readonly microBatchSize: number;
  readonly loss: LossImplementation;
}

/** Micro-batches per optimizer step on each GPU: the per-GPU share of the global batch over the micro-batch, else 1. */
export const accumulationSteps = (
  r: Pick<TrainingRequest, "globalBatchSize" | "gpus">,
  c: Pick<Candidate, "microBatchSize">,
) => (r.globalBatchSize !== undefined ? r.globalBatchSize / r.gpus / c.microBatchSize : 1);
