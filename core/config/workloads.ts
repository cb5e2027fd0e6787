/**
 * Schemas of the entries of `ray-gpu:workloads`. The same schemas validate stack config, workload files given
 * to `ray-gpu plan --workload`, and TypeScript callers of the workload constructs. Fields only rendering needs
 * (`image`, `entrypoint`) are optional here so a workload can be planned before its image exists; rendering
 * reports them when missing.
 */
import { z } from "zod";
import { GPU_INSTANCE_TYPES } from "../catalog/instances";
import { LOSS_IMPLEMENTATIONS } from "../memory/loss";
import { DEFAULT_LORA_DROPOUT } from "../memory/lora";
import { DEFAULT_OPTIMIZER_STEP, OPTIMIZER_STEPS } from "../memory/buffers";
import { ATTENTION_IMPLEMENTATIONS } from "../models/types";
import { MODEL_CHECKS_WHEN, modelChecks } from "./model-checks";
import { OFFLOADS, OPTIMIZERS, PRECISIONS, QUANTIZATIONS } from "../memory/model-states";
import { ModelRefSchema } from "./model-ref";
import { dnsLabel } from "./platform";
import { rayImageGpuProblem, rayImageProblem } from "../ray";
import { imageReferenceProblem } from "./image-reference";
import { distinctEntries, pipProject } from "./distinct";
import { mixedHashIssues, PIP_REQUIREMENT, PIP_REQUIREMENT_RULE } from "./pip";
import { ownedEnvProblem } from "./owned-env";
import { envRuleProblem, secretEnvRuleProblem } from "./env-rules";
import { freeText } from "./free-text";
import { DataUriSchema, grammar } from "./grammars";
import { plainEnv, SECRET_COMMAND_FIX, secretInCommand, SecretEnvSourceSchema } from "./secrets";
import type { WorkloadSpec } from "./types";

/** Most combinations a generation sweep may have (each prompt becomes one row per combination). */
export const MAX_SWEEP_SETTINGS = 1024;

/** KubeRay limits RayJob names to 47 characters (`MaxRayJobNameLength`) and DNS-1035 labels. */
export const MAX_RAYJOB_NAME_LENGTH = 47;

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a valid environment variable name");
/** Names a user may set: not one that pulumi-ray-gpu, Ray, KubeRay or the device plugin sets (./owned-env.ts). */
const userEnvName = envName.superRefine((name, ctx) => {
  const problem = ownedEnvProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
/**
 * Plain variables (`env`, `runtimeEnv.envVars`) with `name`'s names: no secret-looking value (./secrets.ts), and no
 * variable that turns TLS checks off, moves the AWS credential endpoint or redirects downloads other than over HTTPS
 * (./env-rules.ts).
 */
const checkedEnv = <K extends z.ZodType<string>>(name: K) =>
  plainEnv(name).superRefine((vars, ctx) => {
    for (const [key, value] of Object.entries(vars)) {
      const problem = envRuleProblem(key, value);
      if (problem)
        ctx.addIssue({ code: "custom", path: [key], message: problem.message, params: { redact: problem.redact } });
    }
  });
/** `secretEnv` names: a user's name (`userEnvName`) that no rule of ./env-rules.ts governs. */
const secretEnvName = userEnvName.superRefine((name, ctx) => {
  const problem = secretEnvRuleProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
const positiveInt = z.number().int().min(1);
/** Why a sweep value is free text. */
const SWEEP_VALUE =
  "a value of a vLLM generation parameter, which has one range per parameter (temperature >= 0, top_p in (0, 1], a " +
  "stop string...): vLLM's SamplingParams checks it when the job starts";

/**
 * Where a workload reads its data, and how much there is (drives block sizes and read parallelism).
 * @internal
 */
export const DatasetSchema = z.strictObject({
  /** `s3://bucket/key/` or a path on shared storage. */
  uri: DataUriSchema,
  /** @default "parquet" */
  format: z.enum(["parquet", "jsonl", "csv", "text"]).default("parquet"),
  /** Rows in the full dataset. @default - unknown: read parallelism follows the cluster's CPUs */
  rows: z.number().int().min(1).max(1e12).optional(),
  /** Average characters of text per row. @default 1000 */
  avgTextChars: z.number().int().min(1).max(10_000_000).default(1000),
});

/** Fields every workload kind has. */
const workloadBase = {
  /**
   * An example on placeholder data: planned and rendered like any workload (so `ray-gpu plan` and `render` show it),
   * but never submitted by `pulumi up`. Remove the flag once the image, entrypoint and data are yours.
   * @default false
   */
  example: z.boolean().default(false),
  /** Input data. @default - none: the entrypoint reads its own data */
  dataset: DatasetSchema.optional(),
  /** Where results go (embeddings, generations). @default - `<prefix>results/<name>/` in the stack's bucket */
  outputUri: DataUriSchema.optional(),
  /**
   * Share of the dataset a dev run reads (prod reads everything).
   * @default 0.01
   */
  devSampleFraction: z.number().gt(0).max(1).default(0.01),
  /** RayJob name: a DNS-1035 label of at most 47 characters (KubeRay's limit). */
  name: dnsLabel(MAX_RAYJOB_NAME_LENGTH),
  /** The model: a catalog id (or alias) or its architecture. */
  model: ModelRefSchema,
  /** Total A10G GPUs for the job; a whole number of nodes of the chosen pool. */
  gpus: positiveInt.max(1024),
  /**
   * GPU pool to run on, by name.
   * @default - the pool with `instanceType`, else the first GPU pool
   */
  nodePool: dnsLabel(40).optional(),
  /**
   * g5 size to run on; picks the pool with that instance type.
   * @default - the instance type of `nodePool`, else of the first GPU pool, else g5.12xlarge
   */
  instanceType: z.enum(GPU_INSTANCE_TYPES).optional(),
  /**
   * Container image with Ray, the user's code and its dependencies. Needed to render. Ray's own images
   * (`rayproject/ray`) must be Ray 2.58.0 (`RAY_VERSION`), the version the RayJob declares and the runtime is tested with,
   * and a CUDA build (a `-gpu` or `-cu<version>` tag): the CPU-only ones fail at the first CUDA call. Any image must be
   * a reference the kubelet can pull: `[registry[:port]/]path[:tag][@sha256:<64 hex>]` (docs/configuration.md).
   * @default - none: the workload can be planned but not rendered
   */
  image: z
    .string()
    .min(1)
    .superRefine((image, ctx) => {
      const grammar = imageReferenceProblem(image);
      const problems = grammar ? [grammar] : [rayImageProblem(image), rayImageGpuProblem(image)];
      for (const problem of problems) if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  /**
   * Command the Ray job runs, e.g. `python train.py`. Needed to render.
   * @default - none: the workload can be planned but not rendered
   */
  entrypoint: freeText(
    z
      .string()
      .min(1)
      .superRefine((command, ctx) => {
        const why = secretInCommand(command);
        if (why) ctx.addIssue({ code: "custom", message: `${why}: ${SECRET_COMMAND_FIX}`, params: { redact: true } });
      }),
    "a command line of the user's program, any shell words; the check only refuses a secret in clear text",
  ).optional(),
  /**
   * Hard limit on the whole run, in minutes.
   * @default - the environment's limit (dev: 120, prod: 1440)
   */
  maxRuntimeMinutes: positiveInt.max(43200).optional(),
  /**
   * Average GPU utilization (DCGM_FI_DEV_GPU_UTIL, %) the job should hold while it runs; an alert fires when it stays
   * below for 15 minutes (docs/observability.md).
   * @default - 90 for TrainingJob and LoRAFineTune, 85 for EmbeddingPipeline and BatchInference
   */
  gpuUtilizationTargetPercent: positiveInt.max(100).optional(),
  /**
   * Extra environment variables for every Ray container. Names that pulumi-ray-gpu, Ray, KubeRay or the NVIDIA device
   * plugin set (RAY_GPU_*, NCCL_*, RAY_ADDRESS, CUDA_VISIBLE_DEVICES, ...; docs/configuration.md) are refused.
   * @default {}
   */
  env: checkedEnv(userEnvName).default({}),
  /**
   * Secret environment variables for every Ray container, rendered as `valueFrom.secretKeyRef`: never in clear text
   * in the RayJob, the plan or Pulumi's state. Each names an existing Secret and key, or a Pulumi secret config key.
   * @default {}
   */
  secretEnv: z.record(secretEnvName, SecretEnvSourceSchema).default({}),
  /**
   * Ray runtime environment the job is submitted with (KubeRay's `runtimeEnvYAML`): packages pip installs on
   * top of the image before the job starts, and variables for every job process. Prefer baking packages into
   * the image for large or frequent jobs; pip runs at every job start.
   * @default - none: the image has everything
   */
  runtimeEnv: z
    .strictObject({
      /**
       * pip requirements, each pinned to one exact version (`torch==2.13.0`), optionally with pip's hash options
       * (`torch==2.13.0 --hash=sha256:<digest>`): all hashed or none; a prod job's must be (core/config/pip.ts).
       */
      pip: z
        .array(z.string().regex(PIP_REQUIREMENT, PIP_REQUIREMENT_RULE))
        .min(1)
        .superRefine(
          distinctEntries(
            'pip refuses a project required twice ("Double requirement given"); keep one pin',
            pipProject,
          ),
        )
        .superRefine((list, ctx) => {
          for (const i of mixedHashIssues(list)) ctx.addIssue({ code: "custom", path: [i.index], message: i.message });
        })
        .optional(),
      /** Variables for the driver and every worker process of the job. */
      envVars: checkedEnv(
        userEnvName.refine(
          (n) => n !== "PYTHONPATH",
          "would replace the path to the runtime library: set PYTHONPATH in env, which keeps it first",
        ),
      ).optional(),
    })
    .optional(),
};

/** Knobs the memory planner reads for training kinds; each one left out is chosen by the planner. */
const trainingKnobs = {
  /**
   * Tokens per sample (text; image tokens are added for vision-language models).
   * @default 2048, capped at the model's context
   */
  sequenceLength: positiveInt.max(131072).optional(),
  /**
   * Samples per optimizer step over all GPUs; kept exactly across environments through gradient accumulation.
   * @default - one micro-batch per GPU per step
   */
  globalBatchSize: positiveInt.max(1048576).optional(),
  /** @default - the largest that fits */
  microBatchSize: positiveInt.max(4096).optional(),
  /** @default "bf16-mixed" */
  precision: z.enum(PRECISIONS).default("bf16-mixed"),
  /** @default "adamw" */
  optimizer: z.enum(OPTIMIZERS).default("adamw"),
  /** ZeRO stage, 0 = plain DDP. @default - the lowest that fits */
  zeroStage: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).optional(),
  /** @default - "none" unless nothing else fits */
  offload: z.enum(OFFLOADS).optional(),
  /** @default - off unless needed to fit */
  gradientCheckpointing: z.boolean().optional(),
  /**
   * Attention kernel, handed to transformers as `attn_implementation`; eager keeps every attention score for backward.
   * @default - the model's default: sdpa where transformers supports it, else eager
   */
  attention: z.enum(ATTENTION_IMPLEMENTATIONS).optional(),
  /**
   * Causal-LM loss: `full` logits, or `chunked` (the runtime scores 512 tokens at a time; same loss and gradients).
   * @default - chunked when it allows a larger micro-batch, less recomputation or fewer ZeRO stages, else full
   */
  loss: z.enum(LOSS_IMPLEMENTATIONS).optional(),
  /**
   * How the optimizer steps: `fused` (`fused=True`, no temporaries), `foreach` (PyTorch's default on CUDA: one
   * parameter-sized temporary) or `for-loop` (`foreach=False`: the largest tensor's). The runtime constructs the
   * optimizer so; pin another when your entrypoint builds its own.
   * @default "fused"
   */
  optimizerStep: z.enum(OPTIMIZER_STEPS).default(DEFAULT_OPTIMIZER_STEP),
};

/** Pinned knobs that exclude each other, reported before any planning. */
function knobConflicts(
  spec: {
    zeroStage?: number | undefined;
    offload?: string | undefined;
    strategy?: string;
    kind: string;
    optimizer?: string;
    precision?: string;
  },
  ctx: z.RefinementCtx,
): void {
  const add = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if (spec.strategy === "ddp" && spec.zeroStage !== undefined && spec.zeroStage > 0)
    add(
      "zeroStage",
      `strategy "ddp" is plain DDP (ZeRO 0); use strategy "deepspeed" or "auto" for ZeRO ${spec.zeroStage}`,
    );
  if (spec.strategy === "deepspeed" && spec.zeroStage === 0)
    add("zeroStage", 'strategy "deepspeed" uses ZeRO 1 to 3; for ZeRO 0 use strategy "ddp"');
  if (
    spec.offload !== undefined &&
    spec.offload !== "none" &&
    spec.optimizer !== undefined &&
    spec.optimizer !== "adamw"
  )
    add(
      "offload",
      `DeepSpeed offloads only its CPU Adam; use optimizer "adamw" or no offload (optimizer is "${spec.optimizer}")`,
    );
  if (spec.precision === "bf16-true" && (spec.strategy === "deepspeed" || (spec.zeroStage ?? 0) > 0))
    add(
      "precision",
      'DeepSpeed keeps fp32 master weights and optimizer states: use "bf16-mixed" with ZeRO, or strategy "ddp" for pure ' +
        "bf16 (pure-bf16 sharding is FSDP's, a strategy the runtime does not run)",
    );
  if (spec.strategy === "ddp" && spec.offload !== undefined && spec.offload !== "none")
    add("offload", 'offloading needs DeepSpeed: use strategy "deepspeed" or "auto"');
  if (spec.kind === "LoRAFineTune" && spec.offload !== undefined && spec.offload !== "none")
    add(
      "offload",
      "the runtime does not offload a LoRA job (its adapters and their states are small, and it has no parameter offload " +
        "for the frozen base): leave offload out; to fit a large base, zeroStage 3 shards it across the GPUs, and " +
        "lora.quantization nf4 stores it in 4 bits",
    );
  if (spec.offload === "optimizer" && spec.zeroStage !== undefined && spec.zeroStage < 2)
    add("offload", `optimizer offload needs ZeRO 2 or 3 (zeroStage is ${spec.zeroStage})`);
  if (spec.offload === "optimizer-and-parameters" && spec.zeroStage !== undefined && spec.zeroStage < 3)
    add("offload", `parameter offload needs ZeRO 3 (zeroStage is ${spec.zeroStage})`);
}

/**
 * Multi-node data-parallel training with Ray Train (full fine-tuning or pre-training).
 * @internal
 */
export const TrainingJobSpecSchema = z
  .strictObject({
    kind: z.literal("TrainingJob"),
    ...workloadBase,
    ...trainingKnobs,
    /**
     * `ddp` (plain DDP, ZeRO 0 only), `deepspeed` or `auto` (the planner's choice).
     * @default "auto"
     */
    strategy: z.enum(["ddp", "deepspeed", "auto"]).default("auto"),
  })
  .superRefine(knobConflicts)
  .superRefine(modelChecks, MODEL_CHECKS_WHEN);

/**
 * LoRA / QLoRA adapter settings.
 * @internal
 */
export const LoraSchema = z.strictObject({
  /** @default 16 */
  rank: positiveInt.max(1024).default(16),
  /** @default - 2 × rank */
  alpha: z.number().positive().optional(),
  /**
   * Modules to adapt, by PEFT name: any linear of the model's family (Llama-style q_proj ... down_proj, Phi-3
   * qkv_proj/gate_up_proj), `lm_head` and the input embedding.
   * @default - PEFT's default for the family: q_proj, v_proj (Llama-style), qkv_proj (Phi-3), query, value (encoders)
   */
  targetModules: z
    .array(grammar("peftModuleName"))
    .min(1)
    .superRefine(distinctEntries("a module named twice is adapted once; name each once"))
    .optional(),
  /** Base-weight quantization: none (LoRA) or NF4 (QLoRA). @default "none" */
  quantization: z.enum(QUANTIZATIONS).default("none"),
  /**
   * Dropout on each adapter's input (PEFT's `lora_dropout`); each adapted layer then keeps a 1-byte mask per input
   * feature, which the memory plan counts.
   * @default 0.05
   */
  dropout: z.number().min(0).max(0.9).default(DEFAULT_LORA_DROPOUT),
});

/**
 * Images per sample for vision-language fine-tuning.
 * @internal
 */
export const ImagesSchema = z.strictObject({
  /** @default 1 */
  perSample: z.number().int().min(0).max(64).default(1),
  /** LLM tokens per image (Qwen2-VL: one per 28×28 px). @default - the model's default (Qwen2-VL 1280, LLaVA-1.5 576) */
  maxTokensPerImage: positiveInt.max(16384).optional(),
});

/**
 * Supervised fine-tuning with LoRA or QLoRA, text or vision-language.
 * @internal
 */
export const LoRAFineTuneSpecSchema = z
  .strictObject({
    kind: z.literal("LoRAFineTune"),
    ...workloadBase,
    ...trainingKnobs,
    /** @default { rank: 16, targetModules: PEFT's default for the family, quantization: none } */
    lora: LoraSchema.prefault({}),
    /** @default - one image per sample for vision-language models, none otherwise */
    images: ImagesSchema.optional(),
  })
  .superRefine(knobConflicts)
  .superRefine(modelChecks, MODEL_CHECKS_WHEN);

/**
 * Ray Data settings the planner sizes, which a workload may set instead (`ray-gpu tune` writes them from a measured
 * run). The plan still checks them: a pool larger than the CPUs left, or blocks whose working set would spill, is
 * refused.
 */
const rayDataOverrides = {
  /**
   * CPU tasks that read and tokenize for the GPU actors.
   * @default - the worker CPUs left after one per GPU actor
   */
  preprocessConcurrency: positiveInt.max(4096).optional(),
  /**
   * Ray Data's target block size (`DataContext.target_max_block_size`), in MiB.
   * @default - the largest block whose in-flight copies fit 80% of Ray Data's object-store share, at most 128
   */
  blockSizeMiB: positiveInt.max(1024).optional(),
};

/**
 * Ray Data batch embedding of a dataset with an encoder.
 * @internal
 */
export const EmbeddingPipelineSpecSchema = z
  .strictObject({
    kind: z.literal("EmbeddingPipeline"),
    ...workloadBase,
    ...rayDataOverrides,
    /** Tokens per text chunk. @default - the model's maximum sequence length */
    sequenceLength: positiveInt.max(8192).optional(),
    /** Rows per GPU batch. @default - the largest power of two up to 1024 that fits */
    batchSize: positiveInt.max(65536).optional(),
    /** Attention kernel (`attn_implementation`). @default - sdpa where transformers supports it, else eager */
    attention: z.enum(ATTENTION_IMPLEMENTATIONS).optional(),
  })
  .superRefine(modelChecks, MODEL_CHECKS_WHEN);

/**
 * Offline LLM inference over a dataset, optionally sweeping generation parameters.
 * @internal
 */
export const BatchInferenceSpecSchema = z
  .strictObject({
    kind: z.literal("BatchInference"),
    ...workloadBase,
    ...rayDataOverrides,
    /** @default 1024 */
    maxPromptTokens: positiveInt.max(131072).default(1024),
    /** @default 512 */
    maxNewTokens: positiveInt.max(131072).default(512),
    /**
     * Share of GPU memory vLLM may use (weights, profiling activations, non-torch memory and the KV cache); vLLM
     * requires < 1. Up to 0.98 is accepted; the plan refuses a share that leaves less than the CUDA context
     * (0.5 GiB) outside it, naming the largest that fits (0.97 on an A10G).
     * @default 0.9
     */
    gpuMemoryUtilization: z.number().min(0.5).max(0.98).default(0.9),
    /** @default - the smallest that leaves room for the KV cache */
    tensorParallelSize: z.union([z.literal(1), z.literal(2), z.literal(4), z.literal(8)]).optional(),
    /**
     * Generation parameters to sweep: every combination runs over every prompt, e.g.
     * `{ temperature: [0.2, 0.7], top_p: [0.9, 1.0] }`.
     * @default {} (one setting)
     */
    sweep: z
      .record(
        z.string().regex(/^[a-z_]+$/, "must be a generation parameter name such as temperature"),
        z
          .array(z.union([freeText(z.number(), SWEEP_VALUE), freeText(z.string(), SWEEP_VALUE), z.boolean()]))
          .min(1)
          .max(64)
          .superRefine(
            distinctEntries("a value given twice runs the same setting twice over every prompt", JSON.stringify),
          ),
      )
      .default({})
      .refine(
        (s) => Object.values(s).reduce((n, v) => n * v.length, 1) <= MAX_SWEEP_SETTINGS,
        `the sweep may have at most ${1024} combinations (the product of the value counts)`,
      ),
  })
  .superRefine(modelChecks, MODEL_CHECKS_WHEN);

/**
 * Any workload entry.
 * @internal
 */
export const WorkloadSpecSchema = z.discriminatedUnion("kind", [
  TrainingJobSpecSchema,
  LoRAFineTuneSpecSchema,
  EmbeddingPipelineSpecSchema,
  BatchInferenceSpecSchema,
]);

// The plain types of these schemas, generated from them (scripts/public-types): the public API's, without zod.
export type {
  BatchInferenceSpec,
  BatchInferenceSpecInput,
  EmbeddingPipelineSpec,
  EmbeddingPipelineSpecInput,
  LoRAFineTuneSpec,
  LoRAFineTuneSpecInput,
  TrainingJobSpec,
  TrainingJobSpecInput,
  WorkloadSpec,
  WorkloadSpecInput,
} from "./types";
/** The workload kinds: `TrainingJob`, `LoRAFineTune`, `EmbeddingPipeline`, `BatchInference`. */
export type WorkloadKind = WorkloadSpec["kind"];
