/**
 * Falcon-7B's layout (`gptBlock: falcon`, issue 53 class 7): one key/value head that transformers hands the attention
 * unexpanded, so its SDPA is PyTorch's math kernel; LoRA names as GPT-NeoX's; widths FalconConfig builds for it; and
 * QLoRA refused, because transformers' bitsandbytes integration leaves FalconLinear in 16 bit. The coefficients are
 * checked against the measured rows in activations.test.ts, the peaks in calibration/test_eager_peak.py.
 */
import { describe, expect, it } from "vitest";
import { ModelArchitectureSchema, resolveModel } from "../../../core/config/model-ref";
import {
  attentionTrainingBytesPerToken,
  attentionTraits,
  defaultAttention,
  scoreTransientBytesPerToken,
  scoreKernel,
} from "../../../core/memory/attention";
import { defaultLoraTargets, loraModuleNames, quantizable } from "../../../core/memory/lora";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import { loraIssues as issues, parseLoRA as parse, specOf } from "./layout-helpers";
import { FALCON_7B } from "./published-cases-falcon";
import { trainingRequest } from "./published-helpers";

/** tiiuae/falcon-7b as a workload gives it (./published-cases-falcon.ts has its source). */
const FALCON = specOf(FALCON_7B);
const falcon = () => resolveModel(ModelArchitectureSchema.parse(FALCON));
const step = (microBatchSize: number) => ({ seq: 2048, bytesPerActivation: 2, microBatchSize });

describe("Falcon-7B layout", () => {
  it("plans eager by default, over SDPA, which is PyTorch's math kernel here; flash is not offered (not measured)", () => {
    const m = falcon();
    expect(defaultAttention(m)).toBe("eager");
    expect(attentionTraits(m)).toMatchObject({ implementations: ["sdpa", "eager"], softmaxInFp32: false });
    expect(scoreKernel(attentionTraits(m), "sdpa")).toBe("math");
    expect(issues(FALCON, { attention: "flash" }).join("\n")).toMatch(/^attention: .*sdpa or eager/);
  });

  it("keeps fp32 scores under SDPA and 16-bit ones under eager, with key and value copied from two sequences on", () => {
    const m = falcon();
    const q = 4544;
    const kv = 64;
    // The math kernel's fp32 query, key and value less the table's 16-bit ones; eager's 16-bit broadcast copies.
    expect(attentionTrainingBytesPerToken(m, "sdpa", step(1)) - 71 * 2048 * 4).toBe(
      4 * (q + 2 * kv) - 2 * (q + 2 * kv),
    );
    expect(attentionTrainingBytesPerToken(m, "sdpa", step(2)) - 71 * 2048 * 4).toBe(4 * 3 * q - 2 * (q + 2 * kv));
    expect(attentionTrainingBytesPerToken(m, "eager", step(1))).toBe(71 * 2048 * 2);
    expect(attentionTrainingBytesPerToken(m, "eager", step(2)) - 71 * 2048 * 2).toBe(4 * (q - kv));
    // While a layer runs: three fp32 score tensors where the math kernel saved one; eager's 16-bit softmax likewise,
    // and under checkpointing the previous layer's probabilities, which the block returns.
    expect(scoreTransientBytesPerToken(m, "sdpa", step(1))).toBe(71 * 2048 * 8);
    expect(scoreTransientBytesPerToken(m, "eager", step(1))).toBe(71 * 2048 * 4);
    expect(scoreTransientBytesPerToken(m, "eager", { ...step(1), checkpointing: true })).toBe(71 * 2048 * 6);
  });

  it("plans the leaner of eager and the math kernel for the step, says why, and why a pinned SDPA keeps fp32 scores", () => {
    const lora = { rank: 8, targetModules: ["query_key_value"], quantization: "none" as const, dropout: 0 };
    const plan = (attention?: "sdpa", precision: "bf16-true" | "bf16-mixed" = "bf16-true") =>
      planTrainingMemory(
        trainingRequest(falcon(), { sequenceLength: 512, usableGiB: 21.99, attention, precision, lora }),
      );
    const reason = (attention?: "sdpa") =>
      plan(attention).decisions.find((d) => d.key === "attentionImplementation")?.reason;
    // Pure bf16: eager keeps 2 bytes per score and 4 more while a layer runs, the math kernel 4 and 8.
    expect(plan().knobs.attentionImplementation).toBe("eager");
    expect(reason()).toMatch(/^the planner's choice: of eager and SDPA \(PyTorch's math kernel for this model: fp32 /);
    expect(reason()).toMatch(
      /, the one this step needs less memory for, eager on a tie \(it multiplies in 16 bit\): eager/,
    );
    // Under autocast eager's softmax runs in fp32 and the next matmul keeps a 16-bit copy: 6 bytes per score to 4.
    expect(plan(undefined, "bf16-mixed").knobs.attentionImplementation).toBe("sdpa");
    expect(reason("sdpa")).toMatch(
      /^pinned by the workload: .* PyTorch runs its math kernel, which keeps every attention/,
    );
  });

  it("names GPT-NeoX's modules, with PEFT's falcon default query_key_value", () => {
    const m = falcon();
    expect(loraModuleNames(m)).toEqual(["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h", "lm_head"]);
    expect(defaultLoraTargets(m)).toEqual(["query_key_value"]);
    expect(parse(FALCON, { lora: { targetModules: ["query_key_value", "dense_4h_to_h"] } }).success).toBe(true);
  });

  it("refuses a key/value head count or head width Falcon-7B's layout does not have, each with its path", () => {
    const { kvHeads: _, ...noKv } = FALCON;
    expect(issues({ ...noKv, headDim: 128 })).toEqual([
      "model.kvHeads: must be 1 in Falcon-7B's layout (gptBlock: falcon), whose multi-query attention has one " +
        "key/value head; for Falcon-40B's and 180B's grouped key/value heads (new_decoder_architecture) use gptBlock: " +
        "falcon-new-decoder",
      "model.headDim: must be hiddenSize / attentionHeads in Falcon-7B's layout (gptBlock: falcon); leave it out",
    ]);
    expect(issues({ ...FALCON, kvHeads: 71 })[0]).toMatch(/^model\.kvHeads: must be 1/);
  });

  it("refuses QLoRA, which would leave FalconLinear unquantized, and points to LoRA over the bf16 base", () => {
    expect(quantizable(falcon())).toBe(false);
    expect(issues(FALCON, { lora: { quantization: "nf4" } })).toEqual([
      "lora.quantization: custom models (gptBlock: falcon) build their layers as FalconLinear, which transformers " +
        "5.18's bitsandbytes integration does not quantize (it replaces only nn.Linear itself): the base would load " +
        "in 16 bit and PEFT would upcast it to fp32; use lora.quantization: none (LoRA over the bf16 base)",
    ]);
    expect(parse(FALCON, { lora: { quantization: "none" } }).success).toBe(true);
  });

  it("advises eager over a pinned SDPA and never a quantized base when a Falcon job does not fit", () => {
    const r = trainingRequest(falcon(), {
      sequenceLength: 2048,
      usableGiB: 21.99,
      gradientCheckpointing: true,
      microBatchSize: 4,
      attention: "sdpa",
      lora: { rank: 8, targetModules: ["query_key_value"], quantization: "none", dropout: 0 },
    });
    const plan = planTrainingMemory(r);
    expect(plan.fits).toBe(false);
    expect(plan.advice.join("\n")).not.toMatch(/quantization: nf4/);
    expect(plan.advice.some((a) => a.startsWith("use attention: eager (16-bit attention matmuls"))).toBe(true);
  });
});
