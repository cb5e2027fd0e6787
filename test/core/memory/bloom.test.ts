/**
 * The BLOOM layout (`gptBlock: bloom`, issue 53 class 7): a model given so is planned with eager attention, its only
 * one, names its LoRA targets as transformers' `modeling_bloom` does, and must have the widths BloomConfig builds. The
 * coefficients themselves are checked against the measured rows in activations.test.ts.
 */
import { describe, expect, it } from "vitest";
import { ModelArchitectureSchema, resolveModel } from "../../../core/config/model-ref";
import { layerBytesPerToken } from "../../../core/memory/activations";
import { attentionTraits, defaultAttention } from "../../../core/memory/attention";
import { defaultLoraTargets, loraModuleNames } from "../../../core/memory/lora";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import { BLOOMZ_7B1 } from "./published-cases-bloom";
import { loraIssues as issues, parseLoRA as parse, specOf } from "./layout-helpers";
import { trainingRequest } from "./published-helpers";

const BLOOM = specOf(BLOOMZ_7B1);
/** The model as a workload's spec resolves it. */
const bloom = () => resolveModel(ModelArchitectureSchema.parse(BLOOM));

describe("BLOOM layout", () => {
  it("plans eager attention with an fp32 softmax and no dropout, whatever the workload's type defaults", () => {
    const m = bloom();
    expect(defaultAttention(m)).toBe("eager");
    expect(attentionTraits(m)).toMatchObject({ implementations: ["eager"], softmaxInFp32: true, attentionDropout: 0 });
  });

  it("says in the plan why it runs eager attention, and what eager keeps", () => {
    const plan = planTrainingMemory(trainingRequest(BLOOMZ_7B1, { sequenceLength: 512, usableGiB: 21.99 }));
    const reasons = plan.decisions.find((d) => d.key === "attentionImplementation")?.reason;
    expect(reasons).toContain("the model's default (eager, the only one transformers has for it)");
    expect(reasons).toContain("and one layer's softmax gradients while it runs, counted in the activations");
  });

  it("refuses SDPA or FlashAttention pinned on a BLOOM model, which transformers cannot run", () => {
    expect(issues(BLOOM, { attention: "sdpa" }).join("\n")).toMatch(/^attention: .*eager/);
  });

  it("names GPT-NeoX's modules, with PEFT's bloom default query_key_value", () => {
    const m = bloom();
    expect(loraModuleNames(m)).toEqual(["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h", "lm_head"]);
    expect(defaultLoraTargets(m)).toEqual(["query_key_value"]);
    expect(parse(BLOOM, { lora: { targetModules: ["query_key_value", "dense_4h_to_h"] } }).success).toBe(true);
  });

  it("keeps the fused query/key/value output at a micro-batch of one sequence, and not from two on", () => {
    const one = layerBytesPerToken(BLOOMZ_7B1, { microBatchSize: 1 });
    const two = layerBytesPerToken(BLOOMZ_7B1, { microBatchSize: 2 });
    expect(one - two).toBe(4 * BLOOMZ_7B1.hiddenSize);
    const upcast = { rank: 8, targetModules: ["query_key_value"], unquantizedPrecision: "fp32" as const };
    expect(layerBytesPerToken(BLOOMZ_7B1, { microBatchSize: 1, lora: upcast })).toBe(
      layerBytesPerToken(BLOOMZ_7B1, { microBatchSize: 2, lora: upcast }),
    );
  });

  it("refuses widths BloomConfig cannot build, each with its path and the value it must have", () => {
    const found = issues({ ...BLOOM, intermediateSize: 11_008, kvHeads: 8, headDim: 64 });
    expect(found).toEqual([
      "model.intermediateSize: must be 4 × hiddenSize (16384) in a BLOOM block (gptBlock: bloom), which BloomConfig " +
        "builds from hiddenSize and attentionHeads",
      "model.kvHeads: must equal attentionHeads (32) in a BLOOM block (gptBlock: bloom), which BloomConfig builds " +
        "from hiddenSize and attentionHeads",
      "model.headDim: must be hiddenSize / attentionHeads in a BLOOM block (gptBlock: bloom), which BloomConfig builds " +
        "from hiddenSize and attentionHeads; leave it out",
    ]);
  });
});
