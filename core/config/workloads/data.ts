/** Schemas of the Ray Data kinds: `EmbeddingPipeline` and `BatchInference`, and the Ray Data settings they may pin. */
import { z } from "zod";
import { ATTENTION_IMPLEMENTATIONS } from "../../models/types";
import { MODEL_CHECKS_WHEN, modelChecks } from "../model-checks";
import { distinctEntries } from "../distinct";
import { freeText } from "../free-text";
import { MAX_SWEEP_SETTINGS, positiveInt, workloadBase } from "./base";

/** Why a sweep value is free text. */
const SWEEP_VALUE =
  "a value of a vLLM generation parameter, which has one range per parameter (temperature >= 0, top_p in (0, 1], a " +
  "stop string...): vLLM's SamplingParams checks it when the job starts";

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
     * Tokens a generation averages, at most `maxNewTokens`: what the forecast decodes (a prompt's tokens come from
     * `dataset.avgTextChars`, about 4 characters per token, up to `maxPromptTokens`).
     * @default - maxNewTokens (every generation runs to the limit: an upper bound)
     */
    avgNewTokens: positiveInt.max(131072).optional(),
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
  .superRefine((spec, ctx) => {
    if (spec.avgNewTokens !== undefined && spec.avgNewTokens > spec.maxNewTokens)
      ctx.addIssue({
        code: "custom",
        path: ["avgNewTokens"],
        message: `must be at most maxNewTokens (${spec.maxNewTokens}): no generation is longer than the limit`,
      });
  })
  .superRefine(modelChecks, MODEL_CHECKS_WHEN);
