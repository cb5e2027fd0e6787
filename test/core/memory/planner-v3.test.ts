/**
 * Memory planner v3: GPT-style block layouts, LoRA activations that grow with each adapted layer and its dropout, the
 * optimizer step as a planned value, and vLLM's sampling step in the profile.
 */
import { describe, expect, it } from "vitest";
import { LoRAFineTuneSpecSchema, TrainingJobSpecSchema } from "../../../core/config/workloads";
import { ModelArchitectureSchema, resolveModel } from "../../../core/config/model-ref";
import { layerBytesPerToken } from "../../../core/memory/activations";
import { estimateLlmServing, VLLM_SAMPLER_BYTES_PER_LOGIT } from "../../../core/memory/estimate-inference";
import { trainingMemory } from "../../../core/memory/knob-search";
import { defaultLoraTargets, loraModuleNames } from "../../../core/memory/lora";
import { planServingMemory } from "../../../core/memory/plan-inference";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import type { Candidate, TrainingRequest } from "../../../core/memory/training-request";
import { catalogModel } from "../../../core/models";

const request = (id: string, over: Partial<TrainingRequest> = {}): TrainingRequest => ({
  model: catalogModel(id)!,
  gpus: 1,
  gpusPerNode: 1,
  usableGiB: 80,
  sequenceLength: 1024,
  precision: "bf16-true",
  optimizer: "adamw",
  strategy: "ddp",
  ...over,
});
const candidate = (over: Partial<Candidate> = {}): Candidate => ({
  zeroStage: 0,
  offload: "none",
  gradientCheckpointing: false,
  microBatchSize: 2,
  loss: "full",
  ...over,
});
/** The architecture a workload would give, through the schema (its defaults applied). */
const arch = (over: object) => resolveModel(ModelArchitectureSchema.parse({ ...GELU, ...over }));
const GELU = {
  parameters: 1_000_000_000,
  layers: 24,
  hiddenSize: 2048,
  attentionHeads: 16,
  intermediateSize: 8192,
  vocabSize: 50000,
  mlp: "gelu" as const,
};

describe("memory planner v3", () => {
  it("plans GPT-style layouts apart: GPT-2 (the default) keeps the most, GPT-NeoX the least", () => {
    const bytes = (gptBlock?: "gpt2" | "gpt-neox" | "phi") => layerBytesPerToken(arch(gptBlock ? { gptBlock } : {}));
    expect(bytes()).toBe(bytes("gpt2"));
    expect(bytes("gpt-neox")).toBeLessThan(bytes("phi"));
    expect(bytes("phi")).toBeLessThan(bytes("gpt2"));
    // 16h + 4i + 24 (fused GELU) against 20h + 10i + 24 (GELU in Python ops).
    expect(bytes("gpt-neox")).toBe(16 * 2048 + 4 * 8192 + 24);
    expect(bytes("gpt2")).toBe(20 * 2048 + 10 * 8192 + 24);
  });

  it("names each layout's LoRA targets as transformers does, and refuses gptBlock on a gated MLP", () => {
    const neox = arch({ gptBlock: "gpt-neox" });
    expect(defaultLoraTargets(neox)).toEqual(["query_key_value"]);
    expect(loraModuleNames(arch({ gptBlock: "phi" }))).toContain("fc2");
    const spec = (model: object, targetModules: string[]) =>
      LoRAFineTuneSpecSchema.safeParse({ kind: "LoRAFineTune", name: "x", model, gpus: 1, lora: { targetModules } });
    expect(spec({ ...GELU, gptBlock: "gpt-neox" }, ["query_key_value", "dense_4h_to_h"]).success).toBe(true);
    const wrong = spec({ ...GELU, gptBlock: "gpt-neox" }, ["q_proj"]);
    expect(wrong.success).toBe(false);
    const gated = TrainingJobSpecSchema.safeParse({
      kind: "TrainingJob",
      name: "x",
      model: { ...GELU, mlp: "swiglu", gptBlock: "phi" },
      gpus: 1,
    });
    expect(gated.success).toBe(false);
    expect(JSON.stringify(gated.error?.issues)).toMatch(/gptBlock.*applies to GPT-style decoders/);
  });

  it("counts each adapted layer's fp32 input copy and, with dropout, its 1-byte mask on a GPU", () => {
    const m = catalogModel("meta-llama/Llama-3.1-8B")!;
    const all = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];
    const at = (targetModules: string[], dropout: number) =>
      layerBytesPerToken(m, { lora: { rank: 16, targetModules, dropout } });
    // Inputs: q, k, v, gate, up read h; o reads heads·headDim; down reads the intermediate size.
    const inputs = 5 * 4096 + 4096 + 14336;
    expect(at(all, 0.1) - at(all, 0)).toBe(inputs);
    expect(at(all, 0) - at(["q_proj", "v_proj"], 0)).toBe(4 * (inputs - 2 * 4096) + 4 * 16 * 5);
    // Adapting every linear layer keeps more than full fine-tuning does (measured).
    expect(at(all, 0)).toBeGreaterThan(layerBytesPerToken(m));
  });

  it("plans the optimizer step the runtime constructs: fused by default, foreach and for-loop counted", () => {
    const r = request("mistralai/Mistral-7B-v0.1");
    const peak = (optimizerStep?: "fused" | "foreach" | "for-loop") =>
      trainingMemory({ ...r, optimizerStep }, candidate()).allocatedPeakGiB;
    const p = catalogModel("mistralai/Mistral-7B-v0.1")!.parameters;
    // Pure bf16: the foreach temporary is the parameters in bf16, at the step (after activations are freed).
    expect(peak("foreach") - peak("fused")).toBeCloseTo((2 * p) / 2 ** 30, 2);
    expect(peak("for-loop")).toBeGreaterThan(peak("fused"));
    expect(peak("for-loop")).toBeLessThan(peak("foreach"));
    expect(peak()).toBe(peak("fused"));
    const plan = planTrainingMemory({ ...r, optimizerStep: "foreach" });
    expect(plan.knobs.optimizerStep).toBe("foreach");
    expect(plan.decisions.find((d) => d.key === "optimizerStep")?.reason).toMatch(/^pinned by the workload: foreach/);
  });

  it("profiles vLLM's sampling of up to 256 sequences, which bounds small models with large vocabularies", () => {
    const m = catalogModel("Qwen/Qwen2.5-0.5B")!;
    const e = estimateLlmServing({
      model: m,
      tensorParallel: 1,
      gpuMemoryUtilization: 0.9,
      maxBatchedTokens: 8192,
      samplerSequences: 256,
      usableGiB: 21.99,
    });
    expect(e.breakdownGiB.activations).toBeCloseTo((256 * m.vocabSize * VLLM_SAMPLER_BYTES_PER_LOGIT) / 2 ** 30, 3);
    const plan = planServingMemory({
      model: m,
      gpus: 1,
      gpusPerNode: 1,
      usableGiB: 21.99,
      gpuMemoryUtilization: 0.9,
      maxPromptTokens: 1024,
      maxNewTokens: 256,
    });
    expect(plan.memory.breakdownGiB.activations).toBe(e.breakdownGiB.activations);
  });

  it("leaves the non-torch memory of tensor parallelism outside the KV cache", () => {
    const at = (tensorParallel: number) =>
      estimateLlmServing({
        model: catalogModel("meta-llama/Llama-3.1-8B-Instruct")!,
        tensorParallel,
        gpuMemoryUtilization: 0.9,
        maxBatchedTokens: 8192,
        samplerSequences: 256,
        usableGiB: 21.99,
      });
    expect(at(2).breakdownGiB.framework - at(1).breakdownGiB.framework).toBeCloseTo(1.9, 5);
  });
});
