/**
 * A LoRA target a GPT-style decoder's layout does not have: the refusal names the layouts that do have it and the
 * `gptBlock` that says so (Falcon-7B's among them, issue 53 class 7), instead of offering GPT-2's names for a model
 * built otherwise.
 */
import { describe, expect, it } from "vitest";
import { LoRAFineTuneSpecSchema } from "../../../core/config/workloads";

const GELU = {
  parameters: 7_000_000_000,
  layers: 32,
  hiddenSize: 4544,
  attentionHeads: 71,
  intermediateSize: 18176,
  vocabSize: 65024,
  mlp: "gelu" as const,
};
const refusal = (model: object, targetModules: string[]) => {
  const r = LoRAFineTuneSpecSchema.safeParse({
    kind: "LoRAFineTune",
    name: "x",
    model,
    gpus: 1,
    lora: { targetModules },
  });
  expect(r.success).toBe(false);
  return r.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("LoRA targets of GPT-style decoders", () => {
  it("a Falcon-style name on the default GPT-2 layout names the gpt-neox, bloom and both falcon layouts", () => {
    const [issue] = refusal(GELU, ["query_key_value"]);
    expect(issue).toMatch(
      /^lora\.targetModules\.0: "query_key_value" is not a module of custom models \(the gpt2 layout/,
    );
    expect(issue).toMatch(
      /the gpt-neox, bloom, falcon and falcon-new-decoder layouts name it: set model\.gptBlock to gpt-neox, bloom, /,
    );
    expect(issue).toMatch(/, falcon or falcon-new-decoder if the model is built that way$/);
  });

  it("a name two layouts share names both", () => {
    const [issue] = refusal(GELU, ["dense"]);
    expect(issue).toContain(
      "the gpt-neox, phi, bloom, falcon and falcon-new-decoder layouts name it: set model.gptBlock to gpt-neox, phi, " +
        "bloom, falcon or falcon-new-decoder",
    );
  });

  it("a name no layout has lists the model's own modules, as before", () => {
    const [issue] = refusal({ ...GELU, gptBlock: "gpt-neox" }, ["w_pack"]);
    expect(issue).toBe(
      'lora.targetModules.0: "w_pack" is not a module of custom models; use any of query_key_value, dense, ' +
        "dense_h_to_4h, dense_4h_to_h, lm_head",
    );
  });
});
