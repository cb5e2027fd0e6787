/** What the GPT-style layout tests share: a published architecture as a workload gives it, and a LoRAFineTune of it. */
import { LoRAFineTuneSpecSchema } from "../../../core/config/workloads";
import type { ModelArchitecture } from "../../../core/models/types";

/** The architecture as a workload's `model` field gives it: the fields its schema reads. */
export function specOf(m: ModelArchitecture) {
  return {
    parameters: m.parameters,
    layers: m.layers,
    hiddenSize: m.hiddenSize,
    attentionHeads: m.attentionHeads,
    kvHeads: m.kvHeads,
    headDim: m.headDim,
    intermediateSize: m.intermediateSize,
    vocabSize: m.vocabSize,
    mlp: m.mlp,
    gptBlock: m.gptBlock,
    tiedEmbeddings: m.tiedEmbeddings,
  };
}

/** A one-GPU LoRAFineTune of `model`, parsed as a stack's workload entry. */
export const parseLoRA = (model: object, extra: object = {}) =>
  LoRAFineTuneSpecSchema.safeParse({ kind: "LoRAFineTune", name: "x", model, gpus: 1, ...extra });

/** Every problem the entry has, as "path: message". */
export const loraIssues = (model: object, extra: object = {}): string[] =>
  parseLoRA(model, extra).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`) ?? [];
