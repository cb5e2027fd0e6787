/**
 * Checks of a workload entry that depend on its model: the attention implementation must be one the model's
 * transformers class supports, and LoRA targets must be module names of the model's family. They run even when other
 * fields of the entry are invalid (zod skips refinements after such issues by default), so one message names every
 * problem; they read only the fields that parsed.
 */
import type { z } from "zod";
import { attentionTraits } from "../memory/attention";
import { gptBlocksNaming, loraModuleNames, unquantizedLinear } from "../memory/lora";
import { tensorParallelProblem } from "../memory/plan-inference";
import { catalogModel } from "../models";
import { ATTENTION_IMPLEMENTATIONS, type ModelArchitecture } from "../models/types";
import { ModelArchitectureSchema, resolveModel } from "./model-ref";

/** The fields the checks read, as they may arrive when other fields failed. */
interface ModelDependent {
  readonly model?: unknown;
  readonly attention?: unknown;
  readonly lora?: { readonly targetModules?: unknown; readonly quantization?: unknown } | undefined;
  readonly images?: unknown;
  readonly tensorParallelSize?: unknown;
}

/** The entry's model, or undefined when it is not (yet) a valid reference (its own schema reports that). */
function modelOf(ref: unknown): ModelArchitecture | undefined {
  if (typeof ref === "string") return catalogModel(ref);
  const parsed = ModelArchitectureSchema.safeParse(ref);
  return parsed.success ? resolveModel(parsed.data) : undefined;
}

const isRecord = (v: unknown): v is ModelDependent => typeof v === "object" && v !== null;

/** Run the checks whenever the entry is an object with a valid model, whatever else failed. */
export const MODEL_CHECKS_WHEN = {
  when: (payload: { value: unknown }) => isRecord(payload.value) && modelOf(payload.value.model) !== undefined,
};

/**
 * Adds an issue per attention or LoRA target the model does not have.
 * @internal
 */
export function modelChecks(spec: ModelDependent, ctx: z.RefinementCtx): void {
  const model = modelOf(spec.model);
  if (!model) return;
  const impls = attentionTraits(model).implementations;
  const attention = ATTENTION_IMPLEMENTATIONS.find((a) => a === spec.attention);
  if (attention !== undefined && !impls.includes(attention))
    ctx.addIssue({
      code: "custom",
      path: ["attention"],
      message:
        `${model.family} models run only ${impls.join(" or ")} attention in transformers, as far as the planner has ` +
        `measured; use one of those`,
    });
  if (spec.images !== undefined && !model.vision)
    ctx.addIssue({
      code: "custom",
      path: ["images"],
      message:
        `${model.family} models read text only (no vision tower): images would be fed to nothing; remove images, ` +
        `or use a vision-language model (Qwen2-VL, LLaVA)`,
    });
  const tp =
    typeof spec.tensorParallelSize === "number" ? tensorParallelProblem(model, spec.tensorParallelSize) : undefined;
  if (tp) ctx.addIssue({ code: "custom", path: ["tensorParallelSize"], message: tp });
  const quantization = isRecord(spec.lora) ? spec.lora.quantization : undefined;
  const linear = unquantizedLinear(model);
  if (typeof quantization === "string" && quantization !== "none" && linear !== null)
    ctx.addIssue({ code: "custom", path: ["lora", "quantization"], message: unquantizable(model, linear) });
  const names = loraModuleNames(model);
  const targets = isRecord(spec.lora) && Array.isArray(spec.lora.targetModules) ? spec.lora.targetModules : [];
  targets.forEach((t: unknown, i) => {
    if (typeof t === "string" && !names.includes(t))
      ctx.addIssue({ code: "custom", path: ["lora", "targetModules", i], message: unknownTarget(model, t, names) });
  });
}

/** Why QLoRA is refused for a layout whose `linear` class bitsandbytes does not quantize (../memory/lora.ts). */
function unquantizable(model: ModelArchitecture, linear: string): string {
  return (
    `${model.family} models (gptBlock: ${model.gptBlock}) build their layers as ${linear}, which transformers ` +
    `5.18's bitsandbytes integration does not quantize (it replaces only nn.Linear itself): the base would load in ` +
    `16 bit and PEFT would upcast it to fp32; use lora.quantization: none (LoRA over the bf16 base)`
  );
}

/**
 * Why `target` is not a module of `model`: its names, and for a GPT-style decoder the layouts that do name it, with
 * the `gptBlock` that says so, rather than names of a layout the model may not have.
 */
function unknownTarget(model: ModelArchitecture, target: string, names: readonly string[]): string {
  const base = `"${target}" is not a module of ${model.family} models`;
  const gptStyle = model.type === "decoder-llm" && model.mlp === "gelu";
  const others = gptStyle ? gptBlocksNaming(target) : [];
  if (others.length === 0) return `${base}; use any of ${names.join(", ")}`;
  const block = model.gptBlock ?? "gpt2";
  const layouts =
    others.length === 1 ? `the ${others[0]} layout names it` : `the ${words(others, "and")} layouts name it`;
  return (
    `${base} (the ${block} layout names ${names.join(", ")}); ${layouts}: set model.gptBlock to ` +
    `${words(others, "or")} if the model is built that way`
  );
}

/** "a", "a and b", "a, b and c". */
function words(items: readonly string[], conjunction: "and" | "or"): string {
  return items.length < 2 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} ${conjunction} ${items.at(-1)}`;
}
