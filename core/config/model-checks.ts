/**
 * Checks of a workload entry that depend on its model: the attention implementation must be one the model's
 * transformers class supports, and LoRA targets must be module names of the model's family.
 */
import type { z } from "zod";
import { attentionTraits } from "../memory/attention";
import { loraModuleNames } from "../memory/lora";
import type { AttentionImplementation } from "../models/types";
import { resolveModel, type ModelRef } from "./model-ref";
import { catalogModel } from "../models";

/** The fields the checks read. */
interface ModelDependent {
  readonly model: ModelRef;
  readonly attention?: AttentionImplementation | undefined;
  readonly lora?: { readonly targetModules?: readonly string[] | undefined } | undefined;
}

/** Adds an issue per attention or LoRA target the model does not have. */
export function modelChecks(spec: ModelDependent, ctx: z.RefinementCtx): void {
  if (typeof spec.model === "string" && !catalogModel(spec.model)) return; // reported by the model's own schema
  const model = resolveModel(spec.model);
  const impls = attentionTraits(model).implementations;
  if (spec.attention !== undefined && !impls.includes(spec.attention))
    ctx.addIssue({
      code: "custom",
      path: ["attention"],
      message: `${model.family} models run only ${impls.join(" or ")} attention in transformers; use one of those`,
    });
  const names = loraModuleNames(model);
  spec.lora?.targetModules?.forEach((t, i) => {
    if (!names.includes(t))
      ctx.addIssue({
        code: "custom",
        path: ["lora", "targetModules", i],
        message: `"${t}" is not a module of ${model.family} models; use any of ${names.join(", ")}`,
      });
  });
}
