/**
 * Falcon's new decoder layout (`gptBlock: falcon-new-decoder`, Falcon-40B and 180B; issue 53 class 7): grouped key/value
 * heads broadcast to the query's before the attention, so SDPA runs fused, handed the causal mask Falcon always builds;
 * LoRA names as GPT-NeoX's; QLoRA refused as for Falcon-7B. The coefficients are checked against the measured rows in
 * activations.test.ts, eager's peak in calibration/test_eager_peak.py.
 */
import { describe, expect, it } from "vitest";
import { ModelArchitectureSchema, resolveModel } from "../../../core/config/model-ref";
import {
  attentionTrainingBytesPerToken,
  attentionTraits,
  defaultAttention,
  scoreKernel,
  scoreTransientBytesPerToken,
} from "../../../core/memory/attention";
import { adapterParameters, defaultLoraTargets, loraModuleNames, quantizable } from "../../../core/memory/lora";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import { loraIssues as issues, parseLoRA as parse, specOf } from "./layout-helpers";
import { FALCON_40B } from "./published-cases-falcon";
import { trainingRequest } from "./published-helpers";

const FALCON = specOf(FALCON_40B);
const falcon = () => resolveModel(ModelArchitectureSchema.parse(FALCON));
const step = (seq: number, extra: object = {}) => ({ seq, bytesPerActivation: 2, ...extra });
const SCORES = 128 * 2048;

describe("Falcon's new decoder layout", () => {
  it("plans SDPA by default, a fused kernel, with eager offered; flash is not (not measured)", () => {
    const m = falcon();
    expect(defaultAttention(m)).toBe("sdpa");
    expect(scoreKernel(attentionTraits(m), "sdpa")).toBe("fused");
    expect(attentionTraits(m)).toMatchObject({ implementations: ["sdpa", "eager"], materialisedMask: true });
    expect(issues(FALCON, { attention: "flash" }).join("\n")).toMatch(/^attention: .*sdpa or eager/);
  });

  it("keeps SDPA's copy of the mask every layer, padded on a GPU, its log-sum-exp, and over a frozen base its output", () => {
    const m = falcon();
    const lse = 4 * 128;
    expect(attentionTrainingBytesPerToken(m, "sdpa", step(2048))).toBe(2 * 2048 + lse);
    // PyTorch pads the mask's last dimension for CUDA's memory-efficient kernel: 2001 tokens keep 2016 columns.
    expect(attentionTrainingBytesPerToken(m, "sdpa", step(2001))).toBe(2 * 2016 + lse);
    expect(attentionTrainingBytesPerToken(m, "sdpa", step(2048, { frozenBase: true }))).toBe(2 * 2048 + lse + 2 * 8192);
    // fp32 activations: the mask is converted to the query's dtype.
    expect(attentionTrainingBytesPerToken(m, "sdpa", { seq: 2048, bytesPerActivation: 4 })).toBe(4 * 2048 + lse);
  });

  it("keeps 16-bit eager scores (6 bytes under autocast) and, under checkpointing, the previous layer's too", () => {
    const m = falcon();
    expect(attentionTrainingBytesPerToken(m, "eager", step(2048))).toBe(SCORES * 2);
    expect(attentionTrainingBytesPerToken(m, "eager", step(2048, { microBatchSize: 2 }))).toBe(SCORES * 2);
    expect(attentionTrainingBytesPerToken(m, "eager", step(2048, { cudaAutocast: true }))).toBe(SCORES * 6);
    expect(scoreTransientBytesPerToken(m, "sdpa", step(2048))).toBe(0);
    expect(scoreTransientBytesPerToken(m, "eager", step(2048))).toBe(SCORES * 4);
    expect(scoreTransientBytesPerToken(m, "eager", step(2048, { checkpointing: true }))).toBe(SCORES * 6);
  });

  it("names GPT-NeoX's modules; query_key_value holds the query's heads and two per key/value group", () => {
    const m = falcon();
    expect(loraModuleNames(m)).toEqual(["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h", "lm_head"]);
    expect(defaultLoraTargets(m)).toEqual(["query_key_value"]);
    // FalconAttention: qkv_out_dim = (num_kv_heads × 2 + num_attention_heads) × head_dim = 9216.
    expect(adapterParameters(m, 8, ["query_key_value"])).toBe(60 * 8 * (8192 + 9216));
  });

  it("refuses a head width FalconAttention would not derive, and key/value heads that do not divide the heads", () => {
    expect(issues({ ...FALCON, headDim: 128 })).toEqual([
      "model.headDim: must be hiddenSize / attentionHeads in Falcon's new decoder layout (gptBlock: " +
        "falcon-new-decoder); leave it out",
    ]);
    expect(issues({ ...FALCON, kvHeads: 48 })[0]).toMatch(/^model\.kvHeads: must divide attentionHeads \(128\)/);
    expect(parse({ ...FALCON, kvHeads: 1 }).success).toBe(true);
  });

  it("refuses QLoRA, which would leave FalconLinear unquantized, and points to LoRA over the bf16 base", () => {
    expect(quantizable(falcon())).toBe(false);
    expect(issues(FALCON, { lora: { quantization: "nf4" } })).toEqual([
      "lora.quantization: custom models (gptBlock: falcon-new-decoder) build their layers as FalconLinear, which " +
        "transformers 5.18's bitsandbytes integration does not quantize (it replaces only nn.Linear itself): the base " +
        "would load in 16 bit and PEFT would upcast it to fp32; use lora.quantization: none (LoRA over the bf16 base)",
    ]);
  });

  it("plans Falcon-40B's LoRA over 8 A10Gs with ZeRO-3, and on one advises those 8, never a quantized base", () => {
    const lora = { rank: 16, targetModules: ["query_key_value"], quantization: "none" as const, dropout: 0.05 };
    const request = { sequenceLength: 1024, usableGiB: 21.99, lora, strategy: "auto" as const };
    const eight = planTrainingMemory(trainingRequest(falcon(), { ...request, gpus: 8, gpusPerNode: 8 }));
    expect(eight).toMatchObject({ fits: true });
    expect(eight.decisions.find((d) => d.key === "zeroStage")?.value).toBe(3);
    const one = planTrainingMemory(trainingRequest(falcon(), request));
    expect(one.fits).toBe(false);
    expect(one.advice.join("\n")).not.toMatch(/quantization: nf4/);
    expect(one.advice[1]).toMatch(/^use gpus: 8 \(ZeRO-3, checkpointing, micro-batch 4: 19\.\d+ of 21\.99 GiB\)$/);
  });

  it("advises the fused SDPA over a pinned eager that does not fit", () => {
    const lora = { rank: 16, targetModules: ["query_key_value"], quantization: "none" as const, dropout: 0.05 };
    const r = { sequenceLength: 4096, usableGiB: 21.99, lora, gpus: 8, gpusPerNode: 8, attention: "eager" as const };
    const plan = planTrainingMemory(trainingRequest(falcon(), { ...r, strategy: "auto", microBatchSize: 4 }));
    expect(plan.fits).toBe(false);
    expect(plan.advice.some((a) => a.startsWith("use attention: sdpa ("))).toBe(true);
  });

  it("says where nothing fits that the knobs shown are the leanest plan's, not that its states fit", () => {
    const lora = { rank: 16, targetModules: ["query_key_value"], quantization: "none" as const, dropout: 0.05 };
    const plan = planTrainingMemory(trainingRequest(falcon(), { sequenceLength: 1024, usableGiB: 21.99, lora }));
    const reason = (key: string) => plan.decisions.find((d) => d.key === key)?.reason;
    expect(reason("zeroStage")).toMatch(
      /^nothing fits on 1 GPU, so this is the leanest plan's \(see the advice\): model/,
    );
    expect(reason("offload")).toBe("no offload: nothing fits on 1 GPU, so this is the leanest plan's (see the advice)");
    expect(reason("microBatchSize")).toMatch(/^the smallest, and it does not fit: requires 80\.\d+ GiB of 21\.99 GiB/);
  });
});
