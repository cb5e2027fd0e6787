/**
 * Memory planner v2: the loss and attention as planned values, model states as DeepSpeed counts them with the buffers
 * beside them, LoRA targets by family, and advice that is re-planned.
 */
import { describe, expect, it } from "vitest";
import { LoRAFineTuneSpecSchema, TrainingJobSpecSchema } from "../../../core/config/workloads";
import { zero2ModelStates } from "../../../core/memory/deepspeed";
import { adapterParameters, loraModuleNames } from "../../../core/memory/lora";
import { trainingMemory } from "../../../core/memory/knob-search";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import { planServingMemory } from "../../../core/memory/plan-inference";
import { VLLM_LLM_CLASS_MAX_BATCHED_TOKENS } from "../../../core/memory/estimate-inference";
import { BatchInferenceSpecSchema } from "../../../core/config/workloads";
import type { TrainingRequest } from "../../../core/memory/training-request";
import { catalogModel } from "../../../core/models";

const GIB = 2 ** 30;
const request = (id: string, over: Partial<TrainingRequest> = {}): TrainingRequest => ({
  model: catalogModel(id)!,
  gpus: 1,
  gpusPerNode: 1,
  usableGiB: 21.99,
  sequenceLength: 2048,
  precision: "bf16-mixed",
  optimizer: "adamw",
  strategy: "auto",
  ...over,
});
const lora = { rank: 16, targetModules: ["q_proj", "v_proj"], quantization: "none", dropout: 0.05 } as const;

describe("memory planner v2", () => {
  it("chooses the chunked loss for a 128k-vocabulary model when it allows a larger micro-batch, and says why", () => {
    const r = request("meta-llama/Llama-3.1-8B", { gpus: 4, gpusPerNode: 4, globalBatchSize: 64, lora });
    const auto = planTrainingMemory(r);
    const full = planTrainingMemory({ ...r, loss: "full" });
    expect(auto.knobs.loss).toBe("chunked");
    expect(auto.knobs.microBatchSize).toBeGreaterThan(full.knobs.microBatchSize);
    expect(auto.memory.breakdownGiB.logits).toBeLessThan(full.memory.breakdownGiB.logits / 3);
    expect(auto.decisions.find((d) => d.key === "loss")?.reason).toMatch(/^chunked: scoring 512 tokens at a time/);
  });

  it("keeps the full loss where chunking gains nothing, and for encoders, which have no LM loss", () => {
    const small = planTrainingMemory(request("Qwen/Qwen2.5-0.5B", { sequenceLength: 256, microBatchSize: 1 }));
    expect(small.knobs.loss).toBe("full");
    const encoder = planTrainingMemory(request("BAAI/bge-base-en-v1.5", { sequenceLength: 512 }));
    expect(encoder.knobs.loss).toBe("full");
    expect(encoder.decisions.some((d) => d.key === "loss")).toBe(false);
  });

  it("counts eager attention: the same job plans a smaller micro-batch, and an encoder's dropout masks too", () => {
    const r = request("BAAI/bge-base-en-v1.5", { sequenceLength: 512 });
    const sdpa = planTrainingMemory(r);
    const eager = planTrainingMemory({ ...r, attention: "eager" });
    expect(eager.knobs.attentionImplementation).toBe("eager");
    expect(eager.memory.breakdownGiB.activations / eager.knobs.microBatchSize).toBeGreaterThan(
      (1.5 * sdpa.memory.breakdownGiB.activations) / sdpa.knobs.microBatchSize,
    );
    expect(planTrainingMemory(request("sentence-transformers/all-mpnet-base-v2")).knobs.attentionImplementation).toBe(
      "eager",
    );
  });

  it("keeps ZeRO buckets out of modelStates, which equals DeepSpeed's estimator", () => {
    const r = request("meta-llama/Llama-3.2-1B", { gpus: 8, gpusPerNode: 4 });
    const mem = trainingMemory(r, {
      zeroStage: 2,
      offload: "none",
      gradientCheckpointing: true,
      microBatchSize: 1,
      loss: "full",
    });
    const ds = zero2ModelStates({ totalParams: r.model.parameters, gpusPerNode: 4, nodes: 2, cpuOffload: false });
    expect(Math.abs(mem.breakdownGiB.modelStates - ds.gpuBytes / GIB)).toBeLessThanOrEqual(0.001);
    expect(mem.breakdownGiB.communicationBuffers).toBeCloseTo(0.745, 3);
  });

  it("counts ZeRO-3's gathered parameters for LoRA too", () => {
    const r = request("meta-llama/Llama-3.1-8B", { gpus: 8, gpusPerNode: 4, lora });
    const c = { offload: "none", gradientCheckpointing: true, microBatchSize: 1, loss: "full" } as const;
    const z2 = trainingMemory(r, { ...c, zeroStage: 2 });
    const z3 = trainingMemory(r, { ...c, zeroStage: 3 });
    // 1e8 live parameters in 16 bit, or the largest module if larger.
    const gathered = (2 * Math.max(1e8, r.model.largestLayerParameters)) / GIB;
    expect(z3.breakdownGiB.communicationBuffers - z2.breakdownGiB.communicationBuffers).toBeCloseTo(gathered, 3);
  });

  it("accepts the family's module names, lm_head and embeddings included, and refuses others with the list", () => {
    const m = catalogModel("meta-llama/Llama-3.1-8B")!;
    expect(loraModuleNames(m)).toEqual(expect.arrayContaining(["lm_head", "embed_tokens", "gate_proj"]));
    expect(adapterParameters(m, 8, ["lm_head"])).toBe(8 * (m.hiddenSize + m.vocabSize));
    const base = { kind: "LoRAFineTune", name: "x", gpus: 1 };
    const ok = LoRAFineTuneSpecSchema.safeParse({
      ...base,
      model: "meta-llama/Llama-3.1-8B",
      lora: { targetModules: ["q_proj", "lm_head"] },
    });
    expect(ok.success).toBe(true);
    const bad = LoRAFineTuneSpecSchema.safeParse({
      ...base,
      model: "microsoft/Phi-3-mini-4k-instruct",
      lora: { targetModules: ["qkv_proj", "q_proj"] },
    });
    expect(bad.success).toBe(false);
    const issue = bad.error!.issues[0]!;
    expect(issue.path).toEqual(["lora", "targetModules", 1]);
    expect(issue.message).toMatch(
      /"q_proj" is not a module of phi-3 models; use any of qkv_proj, o_proj, gate_up_proj/,
    );
  });

  it("offers QLoRA to a full fine-tune with the family's own default targets (Phi-3: qkv_proj)", () => {
    const p = planTrainingMemory(
      request("microsoft/Phi-3-mini-4k-instruct", { strategy: "ddp", sequenceLength: 4096 }),
    );
    expect(p.fits).toBe(false);
    expect(p.advice.join("\n")).toMatch(
      /use a LoRAFineTune with lora\.quantization: nf4 \(QLoRA, rank 16 on qkv_proj; /,
    );
  });

  it("names a bad LoRA target in the same message as the entry's other problems", () => {
    const r = LoRAFineTuneSpecSchema.safeParse({
      kind: "LoRAFineTune",
      name: "x",
      gpus: 1,
      model: "meta-llama/Llama-3.1-8B",
      loss: 3,
      attention: "flsh",
      lora: { targetModules: ["q_prj", 7] },
    });
    expect(r.success).toBe(false);
    expect(r.error!.issues.map((i) => i.path.join("."))).toEqual(
      expect.arrayContaining(["loss", "attention", "lora.targetModules.1", "lora.targetModules.0"]),
    );
    expect(r.error!.issues).toHaveLength(4);
  });

  it("refuses an attention implementation the model does not have", () => {
    const r = TrainingJobSpecSchema.safeParse({
      kind: "TrainingJob",
      name: "x",
      gpus: 1,
      model: "sentence-transformers/all-mpnet-base-v2",
      attention: "sdpa",
    });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.message).toMatch(/run only eager attention/);
  });

  it("says when nothing fits on any GPU of the catalog, and offers no way out that repeats the current setting", () => {
    const p = planTrainingMemory(
      request("meta-llama/Llama-3.1-70B", { gpus: 64, gpusPerNode: 8, sequenceLength: 131072 }),
    );
    expect(p.fits).toBe(false);
    expect(p.advice.join("\n")).not.toMatch(/use gpus: 64/);
    const huge = planTrainingMemory(
      request("Qwen/Qwen2.5-72B", { gpus: 64, gpusPerNode: 8, strategy: "ddp", sequenceLength: 4096 }),
    );
    expect(huge.fits).toBe(false);
    expect(huge.advice.some((a) => a.startsWith("use gpus: 64"))).toBe(false);
    expect(p.advice[1]).toMatch(/^use sequenceLength: \d+, the longest that fits \(ZeRO-3/);
    expect(huge.advice[1]).toMatch(/^use strategy "auto" on the same 64 GPUs \(ZeRO shards the states; ZeRO-3/);
    const none = planTrainingMemory(
      request("Qwen/Qwen2.5-72B", { gpus: 8, gpusPerNode: 8, optimizer: "sgd", sequenceLength: 131072 }),
    );
    expect(none.advice.slice(1)).toEqual([
      expect.stringMatching(/^nothing fits on the GPU \(21\.99 GiB\): tried up to 64 .*, and on no GPU of the catalog/),
    ]);
  });

  it("re-plans on the catalog's GPUs with more memory when nothing fits on the job's, naming the first that does", () => {
    const small = planTrainingMemory(request("meta-llama/Llama-3.2-1B", { usableGiB: 1, gpuName: "tiny" }));
    expect(small.fits).toBe(false);
    expect(small.advice[0]).toMatch(/but each tiny offers 1 GiB$/);
    // The A10G is the smallest GPU of the catalog with more memory, and the job fits one as asked.
    expect(small.advice[1]).toMatch(/^nothing fits on the tiny \(1 GiB\): .*; use a pool of A10G GPUs with gpus: 1 \(/);
    expect(small.advice[1]).toMatch(/of 21\.99 GiB\)$/);
  });

  it("offers a QLoRA job that no GPU count helps the bf16 base sharded by ZeRO-3, on the fewest GPUs that fit", () => {
    const qlora = {
      ...lora,
      targetModules: ["q_proj", "k_proj", "v_proj", "o_proj"] as const,
      quantization: "nf4",
    } as const;
    const p = planTrainingMemory(request("meta-llama/Llama-3.1-70B", { gpus: 4, gpusPerNode: 4, lora: qlora }));
    expect(p.fits).toBe(false);
    const way = p.advice.find((a) => a.startsWith("use lora.quantization: none"));
    expect(way).toMatch(/^use lora\.quantization: none with gpus: (\d+) \(ZeRO-3 shards the bf16 base; ZeRO-3/);
    const gpus = Number(/gpus: (\d+)/.exec(way!)![1]);
    // The way out plans as fitting when taken, and not on half as many GPUs.
    const taken = (n: number) =>
      planTrainingMemory(
        request("meta-llama/Llama-3.1-70B", { gpus: n, gpusPerNode: 8, lora: { ...qlora, quantization: "none" } }),
      );
    expect(taken(gpus).fits).toBe(true);
    expect(taken(gpus / 2).fits).toBe(false);
    expect(p.advice.join("\n")).not.toMatch(/nothing fits/);
  });
});

describe("vLLM serving plan (chunked prefill, memory share)", () => {
  const serve = (over: { maxPromptTokens: number; gpuMemoryUtilization?: number }) =>
    planServingMemory({
      model: catalogModel("meta-llama/Llama-3.1-8B-Instruct")!,
      gpus: 1,
      gpusPerNode: 1,
      maxNewTokens: 4096,
      gpuMemoryUtilization: 0.9,
      usableGiB: 21.99,
      ...over,
    });

  it("profiles at vLLM's max_num_batched_tokens, not max_model_len, so a 20k context keeps a KV cache", () => {
    const p = serve({ maxPromptTokens: 16384 });
    const act = (VLLM_LLM_CLASS_MAX_BATCHED_TOKENS * 2 * 3 * (14336 + 4096)) / GIB;
    expect(p.memory.breakdownGiB.activations).toBeCloseTo(act, 2);
    expect(serve({ maxPromptTokens: 60000 }).memory.breakdownGiB.activations).toBe(p.memory.breakdownGiB.activations);
    // 0.9 × 21.99 − 0.35 − 14.96 weights − 0.84 activations ≈ 3.64 GiB ≈ 29.8k tokens: one 20480-token sequence.
    expect(p.memory.kvCacheTokens).toBeGreaterThan(29000);
    expect(p).toMatchObject({ fits: true, maxConcurrentSequences: 1 });
  });

  it("accepts gpuMemoryUtilization up to 0.98 and plans 0.97 on an A10G", () => {
    const base = { kind: "BatchInference", name: "b", model: "meta-llama/Llama-3.1-8B-Instruct", gpus: 1 };
    const data = { dataset: { uri: "s3://bucket/p/", format: "jsonl" }, image: "i", entrypoint: "e" };
    expect(BatchInferenceSpecSchema.safeParse({ ...base, ...data, gpuMemoryUtilization: 0.98 }).success).toBe(true);
    expect(BatchInferenceSpecSchema.safeParse({ ...base, ...data, gpuMemoryUtilization: 0.99 }).success).toBe(false);
    const p = serve({ maxPromptTokens: 2048, gpuMemoryUtilization: 0.97 });
    expect(p.fits).toBe(true);
    expect(p.memory.requiredGiB).toBeLessThanOrEqual(21.99);
  });

  it("refuses a share that leaves less than the CUDA context outside it, with the numbers and the largest share", () => {
    const p = serve({ maxPromptTokens: 2048, gpuMemoryUtilization: 0.98 });
    expect(p.fits).toBe(false);
    expect(p.advice).toEqual([
      "gpuMemoryUtilization 0.98 gives vLLM 21.55 GiB of the 21.99 GiB GPU and leaves 0.44 GiB, less than the " +
        "0.5 GiB CUDA context outside that share; use at most 0.97",
    ]);
  });
});
