/** Schemas of the training kinds: `TrainingJob` and `LoRAFineTune`, their knobs and the knobs' conflicts. */
import { z } from "zod";
import { LOSS_IMPLEMENTATIONS } from "../../memory/loss";
import { DEFAULT_LORA_DROPOUT } from "../../memory/lora";
import { DEFAULT_OPTIMIZER_STEP, OPTIMIZER_STEPS } from "../../memory/buffers";
import { ATTENTION_IMPLEMENTATIONS } from "../../models/types";
import { MODEL_CHECKS_WHEN, modelChecks } from "../model-checks";
import { OFFLOADS, OPTIMIZERS, PRECISIONS, QUANTIZATIONS, UNQUANTIZED_PRECISIONS } from "../../memory/model-states";
import { distinctEntries } from "../distinct";
import { grammar } from "../grammars";
import { positiveInt, workloadBase } from "./base";

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
   * @default - sdpa where transformers runs it fused, else eager; for a model whose SDPA is PyTorch's math kernel
   * (Falcon-7B), whichever of the two the step needs less memory for
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

/**
 * How much a training job trains: what `ray-gpu plan` forecasts its time and cost from (core/forecast/). The
 * entrypoint decides what it runs; these fields say what it will, for the forecast only.
 */
const trainingWork = {
  /**
   * Passes over `dataset.rows`.
   * @default 1 when dataset.rows is given
   */
  epochs: positiveInt.max(10000).optional(),
  /**
   * Optimizer steps the job runs, in place of `dataset.rows` and `epochs`.
   * @default - dataset.rows × epochs / globalBatchSize; without dataset.rows the plan cannot forecast the job
   */
  steps: positiveInt.max(1_000_000_000).optional(),
};

/** The adapter settings {@link loraConflicts} reads. */
interface LoraPins {
  quantization: string;
  unquantizedPrecision?: string | undefined;
}

/**
 * `lora.unquantizedPrecision` applies to a quantized base, and `fp32` only where no DeepSpeed engine casts it: DeepSpeed
 * trains in 16 bit under every precision but `fp32` (see `unquantizedPrecisionOf` in core/memory/model-states.ts).
 */
function loraConflicts(
  lora: LoraPins,
  zeroStage: number | undefined,
  precision: string | undefined,
  ctx: z.RefinementCtx,
): void {
  const add = (message: string) => ctx.addIssue({ code: "custom", path: ["lora", "unquantizedPrecision"], message });
  if (lora.unquantizedPrecision !== undefined && lora.quantization === "none")
    add(
      "applies to QLoRA only (lora.quantization nf4 or nf4-double): without quantization the base loads in bf16 " +
        "and nothing is upcast; leave it out",
    );
  else if (lora.unquantizedPrecision === "fp32" && zeroStage !== undefined && zeroStage > 0 && precision !== "fp32")
    add(
      `fp32 needs plain DDP: DeepSpeed's 16-bit engine (zeroStage ${zeroStage}) casts every floating parameter to ` +
        "16 bit; use bf16, or leave zeroStage out",
    );
  else if (lora.unquantizedPrecision === "fp32" && precision === "bf16-true")
    add(
      "fp32 needs mixed precision: under bf16-true the runtime trains without autocast, so an fp32 stream would run " +
        "every layer's attention and matmul outputs in fp32; use bf16, or precision bf16-mixed",
    );
}

/** Pinned knobs that exclude each other, reported before any planning. */
function knobConflicts(
  spec: {
    zeroStage?: number | undefined;
    offload?: string | undefined;
    strategy?: string;
    kind: string;
    optimizer?: string;
    precision?: string;
    steps?: number | undefined;
    epochs?: number | undefined;
    lora?: LoraPins;
  },
  ctx: z.RefinementCtx,
): void {
  const add = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if (spec.steps !== undefined && spec.epochs !== undefined)
    add("steps", "give steps or epochs, not both: the job's work is either a number of steps or passes over the rows");
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
  if (spec.lora !== undefined) loraConflicts(spec.lora, spec.zeroStage, spec.precision, ctx);
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
    ...trainingWork,
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
  /**
   * What QLoRA's unquantized parameters (embeddings, norms, the LM head) train in: `fp32` as PEFT's
   * `prepare_model_for_kbit_training` upcasts them, which also runs the stream between the 4-bit layers in fp32; `bf16`
   * casts them back and keeps that stream in 16 bit (less memory). Only with `quantization` nf4 or nf4-double; `fp32`
   * only without ZeRO, whose 16-bit engine casts them to 16 bit.
   * @default - fp32 under plain DDP, 16-bit under ZeRO
   */
  unquantizedPrecision: z.enum(UNQUANTIZED_PRECISIONS).optional(),
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
    ...trainingWork,
    /** @default { rank: 16, targetModules: PEFT's default for the family, quantization: none } */
    lora: LoraSchema.prefault({}),
    /** @default - one image per sample for vision-language models, none otherwise */
    images: ImagesSchema.optional(),
  })
  .superRefine(knobConflicts)
  .superRefine(modelChecks, MODEL_CHECKS_WHEN);
