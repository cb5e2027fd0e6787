/**
 * The runtime contract, version 1: the tuning document every RayJob mounts at `/etc/ray-gpu/tuning.json`, defined once
 * as a zod schema. The TypeScript writer's types are inferred from it; the JSON Schema shipped with the Python runtime
 * (`runtime/ray_gpu/tuning.schema.json`), the `RAY_GPU_*` variable names and the contract table of docs/runtime.md are
 * generated from it (`npm run generate`), and a test fails when any of them drifts.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ENVIRONMENTS } from "../../core/config/stack";
import { stableJson } from "../../core/serialize";
import type { WorkloadKind } from "../../core/config/workloads";
import { LOSS_IMPLEMENTATIONS } from "../../core/memory/loss";
import { OPTIMIZER_STEPS } from "../../core/memory/buffers";
import { OFFLOADS, PRECISIONS, QUANTIZATIONS, UNQUANTIZED_PRECISIONS } from "../../core/memory/model-states";
import { ATTENTION_IMPLEMENTATIONS } from "../../core/models/types";
import type {
  ActorPoolSection,
  DataSection,
  EmbeddingKnobs,
  InferenceKnobs,
  LoRAKnobs,
  LoraSection,
  SweepSection,
  TrainingJobKnobs,
  TrainSection,
  TuningWorkload,
} from "./types";

export const API_VERSION = "ray-gpu.io/v1";
export const TUNING_MOUNT_PATH = "/etc/ray-gpu";
export const TUNING_FILE = "tuning.json";
export const DEEPSPEED_FILE = "deepspeed.json";
/** Environment variable with the tuning file's path. */
export const TUNING_FILE_ENV = "RAY_GPU_TUNING_FILE";

const int = (min: number) => z.number().int().min(min);
const num = (min: number, max?: number) => (max === undefined ? z.number().min(min) : z.number().min(min).max(max));
const text = z.string().min(1);
const scalar = z.union([z.string(), z.number(), z.boolean()]);
const gpuShare = num(0.01, 8);

/**
 * Knobs of a training job: the memory planner's choices.
 * @internal
 */
export const TrainingJobKnobsSchema = z.strictObject({
  microBatchSize: int(1),
  gradientAccumulationSteps: int(1),
  globalBatchSize: int(1),
  zeroStage: int(0).max(3),
  offload: z.enum(OFFLOADS),
  gradientCheckpointing: z.boolean(),
  /** transformers' `attn_implementation` ("flash" is `flash_attention_2`); the memory plan counts its cost. */
  attentionImplementation: z.enum(ATTENTION_IMPLEMENTATIONS),
  /** Causal-LM loss: "full", or "chunked" (ray_gpu.loss scores `lossChunkTokens` tokens at a time). */
  loss: z.enum(LOSS_IMPLEMENTATIONS),
  lossChunkTokens: int(1),
  /** How the optimizer steps: `fused=True`, `foreach=True` or `foreach=False`; the memory plan counts its temporaries. */
  optimizerStep: z.enum(OPTIMIZER_STEPS),
  gpus: int(1),
  sequenceLength: int(1),
});
/**
 * Knobs of a LoRA fine-tune: the training knobs and the adapter's.
 * @internal
 */
export const LoRAKnobsSchema = TrainingJobKnobsSchema.extend({
  loraRank: int(1),
  loraAlpha: z.number().positive(),
  loraQuantization: z.enum(QUANTIZATIONS),
});
/**
 * Knobs of an embedding pipeline.
 * @internal
 */
export const EmbeddingKnobsSchema = z.strictObject({
  batchSize: int(1),
  sequenceLength: int(1),
  attentionImplementation: z.enum(ATTENTION_IMPLEMENTATIONS),
  gpus: int(1),
  gpusPerActor: gpuShare,
});
/**
 * Knobs of batch LLM inference.
 * @internal
 */
export const InferenceKnobsSchema = z.strictObject({
  tensorParallelSize: int(1),
  replicas: int(1),
  gpuMemoryUtilization: num(0.05, 1),
  maxConcurrentSequences: int(1),
  gpus: int(1),
  maxModelLength: int(1),
  maxNewTokens: int(1),
  /** vLLM's `max_num_batched_tokens`, with chunked prefill on: the size of its activation profile. */
  maxBatchedTokens: int(1),
});

// The plain types of these schemas, generated from them (scripts/public-types): the public API's, without zod.
export type * from "./types";

/** The knobs each kind's tuning document carries. */
export interface KnobsByKind {
  readonly TrainingJob: TrainingJobKnobs;
  readonly LoRAFineTune: LoRAKnobs;
  readonly EmbeddingPipeline: EmbeddingKnobs;
  readonly BatchInference: InferenceKnobs;
}

/**
 * The knobs each kind's document carries, exactly.
 * @internal
 */
export const KNOBS_BY_KIND = {
  TrainingJob: TrainingJobKnobsSchema,
  LoRAFineTune: LoRAKnobsSchema,
  EmbeddingPipeline: EmbeddingKnobsSchema,
  BatchInference: InferenceKnobsSchema,
} as const satisfies { readonly [K in WorkloadKind]: z.ZodType<KnobsByKind[K]> };
/** The knobs a kind's tuning document carries: `KnobsOf<"TrainingJob">` is micro-batch, accumulation, ZeRO stage, ... */
export type KnobsOf<K extends WorkloadKind> = KnobsByKind[K];

/**
 * Ray Train settings (training kinds).
 * @internal
 */
export const TrainSectionSchema = z.strictObject({
  numWorkers: int(1),
  resourcesPerWorker: z.strictObject({ CPU: int(1), GPU: int(1) }),
  dataloaderWorkers: int(0),
  /** Checkpoints go under this key prefix of the stack's bucket (`RAY_GPU_STORAGE_BUCKET`). */
  checkpointPrefix: text,
  checkpointsToKeep: int(1),
  /** Ray Train `FailureConfig.max_failures`: restarts from the last checkpoint. */
  maxFailures: int(0),
  /** Optimizer steps between periodic checkpoints: bounds the work an interruption without notice loses. */
  checkpointEverySteps: int(1),
  /**
   * Seconds without an optimizer step after which the runtime's watchdog fails the job (steps stopped: a hung
   * collective), so its GPUs go back to the queue.
   */
  stallAfterSeconds: int(1),
  /**
   * The precision the memory plan counted, which the runtime trains in on plain DDP: `bf16-mixed` keeps fp32 weights
   * under bf16 autocast, `fp16-mixed` under fp16 autocast with a gradient scaler, `bf16-true` loads full training's
   * weights in bf16 without autocast, and `fp32` runs neither. Under ZeRO, the DeepSpeed config says it.
   */
  precision: z.enum(PRECISIONS),
  /** Set when ZeRO is used: the DeepSpeed config next to tuning.json. */
  deepspeedConfigFile: text.optional(),
  /** With optimizer offload: the optimizer class DeepSpeed requires the code to construct. */
  offloadOptimizerClass: text.optional(),
});

/**
 * Ray Data settings (embedding and inference kinds).
 * @internal
 */
export const DataSectionSchema = z.strictObject({
  uri: text.optional(),
  format: z.enum(["parquet", "jsonl", "csv", "text"]).optional(),
  sampleFraction: num(0, 1),
  rowsToRead: int(1).optional(),
  blockSizeBytes: int(1),
  rowsPerBlock: int(1),
  /** Bytes the pipeline keeps in flight at most, within Ray Data's default limit, by the plan's arithmetic. */
  workingSetBytes: int(1),
  outputUri: text,
});

/**
 * The GPU actor pool of a Ray Data job.
 * @internal
 */
export const ActorPoolSectionSchema = z.strictObject({
  /** Fixed pool: min = max = size, so it starts at full size. */
  actorPoolSize: int(1),
  gpusPerActor: gpuShare,
  batchSize: int(1),
  /** CPU tasks (1 CPU each) that tokenize, as their own operator (TaskPoolStrategy) feeding the actors. */
  preprocessConcurrency: int(1),
});

/**
 * A generation-parameter sweep (batch inference).
 * @internal
 */
export const SweepSectionSchema = z.strictObject({
  parameters: z.record(z.string(), z.array(scalar).min(1)),
  /** Every combination, in a stable order. */
  grid: z.array(z.record(z.string(), scalar)).min(1),
  /** Each prompt becomes one row per combination; Ray Data spreads rows over all replicas. */
  rowsPerPrompt: int(1),
});

/**
 * Adapter settings (LoRA fine-tuning).
 * @internal
 */
export const LoraSectionSchema = z.strictObject({
  rank: int(1),
  alpha: z.number().positive(),
  targetModules: z.array(text).min(1),
  quantization: z.enum(QUANTIZATIONS),
  /** `LoraConfig.lora_dropout`, as the memory plan counted it. */
  dropout: z.number().min(0).lt(1),
  /**
   * What the unquantized parameters (embeddings, norms, the LM head) train in, as the memory plan counted it: `fp32`
   * keeps PEFT's `prepare_model_for_kbit_training` upcast, `bf16` casts them back (a base that is not quantized is
   * bf16 already).
   */
  unquantizedPrecision: z.enum(UNQUANTIZED_PRECISIONS),
  imageTokensPerSample: int(1).optional(),
});

/** The sections each kind's document carries (and no others). */
export const SECTIONS_BY_KIND = {
  TrainingJob: ["train"],
  LoRAFineTune: ["train", "lora"],
  EmbeddingPipeline: ["data", "actorPool"],
  BatchInference: ["data", "actorPool", "sweep"],
} as const satisfies { readonly [K in WorkloadKind]: readonly Section[] };

const SECTIONS = {
  train: TrainSectionSchema,
  data: DataSectionSchema,
  actorPool: ActorPoolSectionSchema,
  sweep: SweepSectionSchema,
  lora: LoraSectionSchema,
};
/** The sections a tuning document may carry, each with its type. */
export interface SectionTypes {
  readonly train: TrainSection;
  readonly data: DataSection;
  readonly actorPool: ActorPoolSection;
  readonly sweep: SweepSection;
  readonly lora: LoraSection;
}
/** A section's name. */
export type Section = keyof SectionTypes;
SECTIONS satisfies { readonly [S in Section]: z.ZodType<SectionTypes[S]> };
/** The sections of a kind's document, typed. */
export type SectionsOf<K extends WorkloadKind> = {
  readonly [S in (typeof SECTIONS_BY_KIND)[K][number]]: SectionTypes[S];
};

/** Every knob any kind writes, each optional: which ones a document must have depends on its kind. */
const AnyKnobsSchema = z
  .strictObject({
    ...TrainingJobKnobsSchema.shape,
    ...LoRAKnobsSchema.shape,
    ...EmbeddingKnobsSchema.shape,
    ...InferenceKnobsSchema.shape,
  })
  .partial();

/**
 * The tuning document, version 1.
 * @internal
 */
export const TuningDocumentSchema = z.strictObject({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal("Tuning"),
  workload: z.strictObject({
    name: text,
    kind: z.enum(Object.keys(SECTIONS_BY_KIND) as [WorkloadKind, ...WorkloadKind[]]),
    environment: z.enum(ENVIRONMENTS),
    model: text,
    /** Catalog family (`llama-3.1`, `qwen2-vl`, `bge-v1.5`, ...) and architecture type of the model. */
    modelFamily: text,
    modelType: z.enum(["decoder-llm", "vision-language", "encoder-embedding", "encoder-decoder"]),
    /**
     * `sha256:<hex>` of the plan this document comes from (the document without this field, its kind's files and the
     * cluster shape). The runtime copies it into the job's run record, and `ray-gpu tune` refuses a record whose
     * plan is not the stack's current one.
     */
    planDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    /**
     * Where the job writes its run record when it ends: a key prefix of the stack's bucket (`RAY_GPU_STORAGE_BUCKET`),
     * so `ray-gpu report` and `ray-gpu tune` can read the run after the cluster is gone.
     */
    runRecordPrefix: text,
  }),
  /** The memory planner's knobs, the same values as the `RAY_GPU_*` variables. */
  knobs: AnyKnobsSchema,
  ...(Object.fromEntries(Object.entries(SECTIONS).map(([name, schema]) => [name, schema.optional()])) as {
    [S in Section]: z.ZodOptional<(typeof SECTIONS)[S]>;
  }),
});

/** A tuning document of kind `K`: its knobs and its sections, exactly. */
export type TuningDocumentOf<K extends WorkloadKind> = {
  readonly apiVersion: typeof API_VERSION;
  readonly kind: "Tuning";
  readonly workload: TuningWorkload & { readonly kind: K };
  readonly knobs: KnobsOf<K>;
} & SectionsOf<K>;

/**
 * `sha256:<hex>` of a plan's parts as byte-stable JSON: the same plan gives the same digest on every machine, and
 * any changed value (a knob, a section, a file, the cluster shape) gives another.
 */
export function planDigest(parts: object): string {
  return `sha256:${createHash("sha256").update(stableJson(parts)).digest("hex")}`;
}

/** `microBatchSize` → `RAY_GPU_MICRO_BATCH_SIZE`: the variable every Ray container gets for a knob. */
export function knobEnvName(knob: string): string {
  return `RAY_GPU_${knob.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`;
}

/** The knobs as environment variables, set on the head (where the driver runs) and on every worker. */
export function knobEnv(knobs: object): Record<string, string> {
  return Object.fromEntries(Object.entries(knobs).map(([k, v]) => [knobEnvName(k), String(v)]));
}
