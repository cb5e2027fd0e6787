/** The training step model's parts, each moving the step the way its kernels do. */
import { describe, expect, it } from "vitest";
import { catalogModel } from "../../../core/models";
import { linksOf } from "../../../core/forecast/job";
import { optimizerBytesPerWeight, trainingStep, type TrainingStepInput } from "../../../core/forecast/training";
import { ACCELERATORS } from "../../../core/catalog/accelerators";

const model = catalogModel("meta-llama/Llama-3.2-1B")!;
/** Full training of Llama-3.2-1B on 4 A10G of one g5.12xlarge (40 Gbps), micro-batch 2 × 2,048 tokens. */
const base: TrainingStepInput = {
  model,
  method: "full",
  trainableParameters: model.parameters,
  adapterFeatures: 0,
  sampleTokens: 2048,
  microBatchSize: 2,
  gradientAccumulation: 8,
  gpus: 4,
  gpusPerNode: 4,
  zeroStage: 0,
  gradientCheckpointing: false,
  gradientBytes: 4,
  optimizerBytesPerWeight: optimizerBytesPerWeight("adamw", "fused", false),
  gpu: ACCELERATORS.A10G,
  links: linksOf(40_000, "tcp"),
};
const seconds = (i: Partial<TrainingStepInput>) => {
  const s = trainingStep({ ...base, ...i });
  return s.busySeconds + s.waitSeconds;
};

describe("the training step model", () => {
  it("moves fewer optimizer bytes for a fused AdamW than an op-by-op one, and fewer still for 8-bit AdamW or SGD", () => {
    const bytes = (o: "adamw" | "adamw-8bit" | "sgd", s: "fused" | "foreach") => optimizerBytesPerWeight(o, s, false);
    expect(bytes("adamw", "fused")).toBe(28);
    expect(bytes("adamw", "foreach")).toBe(80);
    expect(bytes("adamw-8bit", "fused")).toBeLessThan(bytes("adamw", "fused"));
    expect(bytes("sgd", "fused")).toBeLessThan(bytes("adamw", "fused"));
    expect(optimizerBytesPerWeight("adamw", "fused", true)).toBe(14);
  });

  it("recomputes the forward under gradient checkpointing: about a third more compute", () => {
    const ratio = seconds({ gradientCheckpointing: true }) / seconds({});
    expect(ratio).toBeGreaterThan(1.2);
    expect(ratio).toBeLessThan(1.4);
  });

  it("is bound by the network once the ring leaves the node, and by compute within it", () => {
    expect(trainingStep(base).bound).toBe("gpu-compute");
    const across = trainingStep({ ...base, gpus: 32, gradientAccumulation: 1, links: linksOf(10_000, "tcp") });
    expect(across.bound).toBe("network");
    expect(across.waitSeconds).toBeGreaterThan(across.busySeconds);
  });

  it("under ZeRO-3 gathers the parameters every pass: more collective time than DDP's one all-reduce", () => {
    const ddp = trainingStep(base).communicationSeconds;
    const zero3 = trainingStep({ ...base, zeroStage: 3 }).communicationSeconds;
    expect(zero3).toBeGreaterThan(2 * ddp);
  });

  it("dequantizes a 4-bit base in every pass: QLoRA steps are slower than LoRA's", () => {
    const lora = { method: "lora" as const, trainableParameters: 5e6, adapterFeatures: 5e6 / 16 };
    expect(seconds({ ...lora, method: "qlora" })).toBeGreaterThan(seconds(lora));
  });
});
