/**
 * What the kinds plan, as types: memory plans with typed knobs, and the Ray Train and Ray Data tunings. The planners in
 * `ray-train/` and `ray-data/` produce them; the strategies and `Workload` consume them.
 */
import type { Decision } from "../../../core/decisions";
import type { MemoryEstimate } from "../../../core/memory/estimate";
import type { ModelArchitecture } from "../../../core/models/types";
import type { InterruptionPlan } from "../../../core/reliability/interruption";
import type { StepBreakdown } from "../../../core/forecast/types";
import type { TrainingStepInput } from "../../../core/forecast/training";
import type { ActorPoolSection, DataSection, KnobsOf, SweepSection, TrainSection } from "../../contract/document";

/** A kind's memory plan: the model, the estimate, whether it fits, and the chosen knobs. */
export interface KindMemoryPlan<Knobs> {
  readonly model: ModelArchitecture;
  readonly memory: MemoryEstimate;
  readonly fits: boolean;
  readonly knobs: Knobs;
  readonly decisions: readonly Decision[];
  /** When nothing fits: the ways out, with numbers. */
  readonly advice: readonly string[];
}

/** Vision-language fine-tunes also plan the image tokens each sample adds. */
export interface LoRAMemoryPlan extends KindMemoryPlan<KnobsOf<"LoRAFineTune">> {
  readonly imageTokensPerSample: number | undefined;
}

/** LLM inference also reports its KV cache. */
export interface InferenceMemoryPlan extends KindMemoryPlan<KnobsOf<"BatchInference">> {
  readonly kvCacheBytesPerToken: number;
  readonly maxConcurrentSequences: number;
  /** Tokens the KV cache of one replica holds: what the forecast fills with sequences of average length. */
  readonly kvCacheTokens: number;
}

/** DeepSpeed's config, as the job receives it in `deepspeed.json`. */
export interface DeepSpeedConfig {
  readonly train_batch_size: number;
  readonly train_micro_batch_size_per_gpu: number;
  readonly gradient_accumulation_steps: number;
  readonly gradient_clipping: number;
  readonly bf16: { readonly enabled: boolean };
  readonly fp16: { readonly enabled: boolean };
  readonly zero_optimization: Readonly<Record<string, unknown>> & { readonly stage: number };
}

/** Ray Train settings of the job; the train section of the document plus the DeepSpeed config. */
export type TrainTuning = Omit<TrainSection, "deepspeedConfigFile"> & {
  readonly deepspeed: DeepSpeedConfig | undefined;
};

/** What the Ray Train tuner returns. */
export interface TrainingTuning {
  /** What runs the job: tells a plan's tuning apart from {@link DataJobTuning}. */
  readonly engine: "ray-train";
  readonly train: TrainTuning;
  /** The checkpoint cadence and what an interruption costs with it. */
  readonly interruptions: InterruptionPlan;
  /** One optimizer step as the forecast models it: what the cadence and the job's forecast both read. */
  readonly step: StepBreakdown;
  /** What the step is modelled from (the forecast varies its GPUs and network for the scaling rows). */
  readonly stepInput: TrainingStepInput;
  readonly decisions: readonly Decision[];
}

/** The data section of the document before the output location is added. */
export type DataTuning = Omit<DataSection, "outputUri">;

/** What the Ray Data tuner returns. */
export interface DataJobTuning {
  /** What runs the job: tells a plan's tuning apart from {@link TrainingTuning}. */
  readonly engine: "ray-data";
  /**
   * How the plan sized the blocks: `blocksInFlight` copies (each in-flight block as its operator's input and output)
   * fit `share` of the workers' object stores (Ray Data's default limit times the plan's target). `ray-gpu tune` checks
   * a measured run against the same model.
   */
  readonly workingSetModel: { readonly blocksInFlight: number; readonly share: number };
  readonly data: {
    readonly data: DataTuning;
    readonly pool: ActorPoolSection;
    readonly sweep: SweepSection | undefined;
  };
  readonly decisions: readonly Decision[];
}
