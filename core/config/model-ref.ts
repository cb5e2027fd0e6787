/**
 * How a workload names its model: a catalog id (or an instruct/chat alias of one), or the architecture itself.
 */
import { z } from "zod";
import { catalogModel, MODEL_NAMES, type ModelArchitecture } from "../models";
import { GPT_BLOCKS } from "../models/types";
import { suggest } from "./zod-issues";

const positiveInt = z.number().int().min(1);

/**
 * A model given by its architecture, for models outside the catalog.
 * @internal
 */
export const ModelArchitectureSchema = z
  .strictObject({
    /** Unique parameters (tied weights once). */
    parameters: positiveInt,
    layers: positiveInt.max(512),
    hiddenSize: positiveInt,
    attentionHeads: positiveInt,
    /**
     * Key/value heads (grouped-query attention).
     * @default - attentionHeads
     */
    kvHeads: positiveInt.optional(),
    /**
     * Size of one attention head.
     * @default - hiddenSize / attentionHeads
     */
    headDim: positiveInt.optional(),
    intermediateSize: positiveInt,
    vocabSize: positiveInt,
    /** Feed-forward type: swiglu and geglu have 3 matrices, gelu 2. */
    mlp: z.enum(["swiglu", "geglu", "gelu"]),
    /**
     * Block layout of a GPT-style (`mlp: gelu`) decoder, as transformers builds it: `gpt2` (sequential, GELU in Python
     * ops), `gpt-neox` (parallel attention and MLP, fused GELU: Pythia, stablelm-base-alpha), `phi` (parallel from
     * one norm: Phi-1.5, Phi-2), `bloom` (sequential, ALiBi, eager attention only: BLOOM, BLOOMZ; its MLP is 4h),
     * `falcon` (Falcon-7B: parallel from one norm, one key/value head) or `falcon-new-decoder` (Falcon-40B, 180B:
     * parallel from two norms, grouped key/value heads); Falcon's layers are not quantized by bitsandbytes.
     * Each keeps different activations (measured) and names its LoRA targets its own way.
     * @default "gpt2" for gelu decoders
     */
    gptBlock: z.enum(GPT_BLOCKS).optional(),
    /**
     * Input embedding and LM head share weights.
     * @default false
     */
    tiedEmbeddings: z.boolean().default(false),
    /**
     * Largest single module's own parameters (DeepSpeed's definition, for ZeRO-3).
     * @default - the larger of the embedding (vocab × hidden) and the MLP's largest matrix
     */
    largestLayerParameters: positiveInt.optional(),
    /**
     * Encoders (embedding models) or decoders (LLMs).
     * @default "decoder-llm"
     */
    type: z.enum(["decoder-llm", "encoder-embedding"]).default("decoder-llm"),
  })
  .superRefine((m, ctx) => {
    const kv = m.kvHeads ?? m.attentionHeads;
    if (kv > m.attentionHeads || m.attentionHeads % kv !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["kvHeads"],
        message:
          `must divide attentionHeads (${m.attentionHeads}): each key/value head serves an equal group of query heads ` +
          `(grouped-query attention); a model with ${kv} cannot exist`,
      });
    if (m.gptBlock !== undefined && (m.mlp !== "gelu" || m.type === "encoder-embedding"))
      ctx.addIssue({
        code: "custom",
        path: ["gptBlock"],
        message: `applies to GPT-style decoders (mlp: gelu, type: decoder-llm); this is ${m.mlp}, ${m.type}: remove it`,
      });
    if (m.gptBlock === "bloom") bloomWidths(m).forEach((issue) => ctx.addIssue({ code: "custom", ...issue }));
    if (m.gptBlock === "falcon") falconWidths(m).forEach((issue) => ctx.addIssue({ code: "custom", ...issue }));
    if (m.gptBlock === "falcon-new-decoder")
      headsSpanHidden(m, FALCON_NEW).forEach((issue) => ctx.addIssue({ code: "custom", ...issue }));
    if (m.headDim === undefined && m.hiddenSize % m.attentionHeads !== 0)
      ctx.addIssue({
        code: "custom",
        path: ["headDim"],
        message: `hiddenSize (${m.hiddenSize}) is not a multiple of attentionHeads (${m.attentionHeads}): give headDim`,
      });
  });

/** The widths transformers' BloomConfig fixes: a 4h MLP, as many key/value heads as heads, hidden / heads per head. */
function bloomWidths(m: {
  hiddenSize: number;
  attentionHeads: number;
  kvHeads?: number | undefined;
  headDim?: number | undefined;
  intermediateSize: number;
}): { path: string[]; message: string }[] {
  const bloom = "in a BLOOM block (gptBlock: bloom), which BloomConfig builds from hiddenSize and attentionHeads";
  const issues = [];
  if (m.intermediateSize !== 4 * m.hiddenSize)
    issues.push({ path: ["intermediateSize"], message: `must be 4 × hiddenSize (${4 * m.hiddenSize}) ${bloom}` });
  if (m.kvHeads !== undefined && m.kvHeads !== m.attentionHeads)
    issues.push({ path: ["kvHeads"], message: `must equal attentionHeads (${m.attentionHeads}) ${bloom}` });
  return [...issues, ...headsSpanHidden(m, bloom)];
}

/** A layout whose config derives each head's width as hiddenSize / attentionHeads: a `headDim` that differs. */
function headsSpanHidden(
  m: { hiddenSize: number; attentionHeads: number; headDim?: number | undefined },
  layout: string,
): { path: string[]; message: string }[] {
  if (m.headDim === undefined || m.headDim * m.attentionHeads === m.hiddenSize) return [];
  return [{ path: ["headDim"], message: `must be hiddenSize / attentionHeads ${layout}; leave it out` }];
}

/** Where Falcon-40B's and 180B's widths are checked: FalconAttention derives each head's as hidden / heads. */
const FALCON_NEW = "in Falcon's new decoder layout (gptBlock: falcon-new-decoder)";

/**
 * The widths Falcon-7B's layout has: one key/value head (`multi_query`; Falcon-40B's and 180B's new decoder
 * architecture is the other layout), hidden / heads per head (FalconAttention derives it).
 */
function falconWidths(m: {
  hiddenSize: number;
  attentionHeads: number;
  kvHeads?: number | undefined;
  headDim?: number | undefined;
}): { path: string[]; message: string }[] {
  const falcon = "in Falcon-7B's layout (gptBlock: falcon)";
  const issues = [];
  if (m.kvHeads !== 1)
    issues.push({
      path: ["kvHeads"],
      message:
        `must be 1 ${falcon}, whose multi-query attention has one key/value head; for Falcon-40B's and 180B's ` +
        `grouped key/value heads (new_decoder_architecture) use gptBlock: falcon-new-decoder`,
    });
  return [...issues, ...headsSpanHidden(m, falcon)];
}

/**
 * A catalog name or an architecture.
 * @internal
 */
export const ModelRefSchema = z.union([
  z.string().superRefine((name, ctx) => {
    if (catalogModel(name)) return;
    const hint = suggest(name, MODEL_NAMES);
    ctx.addIssue({
      code: "custom",
      message:
        `unknown model${hint ? `; did you mean "${hint}"?` : ""}; use a catalog id (see docs/memory.md#models) ` +
        `or give the architecture as an object { parameters, layers, hiddenSize, attentionHeads, kvHeads, ` +
        `intermediateSize, vocabSize, mlp }`,
    });
  }),
  ModelArchitectureSchema,
]);

export type { ModelRef } from "./types";
import type { ModelRef } from "./types";

/** The architecture a model reference stands for. */
export function resolveModel(ref: ModelRef): ModelArchitecture {
  if (typeof ref === "string") return catalogModel(ref)!;
  const headDim = ref.headDim ?? Math.floor(ref.hiddenSize / ref.attentionHeads);
  return {
    family: "custom",
    type: ref.type,
    parameters: ref.parameters,
    largestLayerParameters:
      ref.largestLayerParameters ?? Math.max(ref.vocabSize * ref.hiddenSize, ref.hiddenSize * ref.intermediateSize),
    layers: ref.layers,
    hiddenSize: ref.hiddenSize,
    attentionHeads: ref.attentionHeads,
    kvHeads: ref.kvHeads ?? ref.attentionHeads,
    headDim,
    intermediateSize: ref.intermediateSize,
    mlp: ref.mlp,
    ...(ref.mlp === "gelu" && ref.type === "decoder-llm" ? { gptBlock: ref.gptBlock ?? "gpt2" } : {}),
    vocabSize: ref.vocabSize,
    tiedEmbeddings: ref.tiedEmbeddings,
    source: "given by the workload",
  };
}
