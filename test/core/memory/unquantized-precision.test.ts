/**
 * QLoRA's unquantized parameters: PEFT's `prepare_model_for_kbit_training` upcasts the embeddings, norms and head to
 * fp32, which runs the stream between the 4-bit layers in fp32 (measured: test/data/activation-calibration.json, the
 * `qlora` rows, and ./activations.test.ts); `lora.unquantizedPrecision: bf16` and DeepSpeed's 16-bit engine keep them in
 * bf16. The plan counts each, offers the pin as a way out, and the workload refuses pins the runtime cannot honour.
 */
import { describe, expect, it } from "vitest";
import { AUTOCAST_EXTRA } from "../../../core/memory/autocast";
import { trainingMemory, unquantizedOf } from "../../../core/memory/knob-search";
import type { UnquantizedPrecision } from "../../../core/memory/model-states";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import type { Candidate, TrainingRequest } from "../../../core/memory/training-request";
import { blockLinearParameters, catalogModel, quantizedLinearParameters } from "../../../core/models";
import { VISION_LANGUAGE_MODELS } from "../../../core/models/catalog-vision-language";
import { LoRAFineTune } from "../../../workloads/workload";
import { single, trainingRequest } from "./published-helpers";

const GIB = 2 ** 30;
const ID = "meta-llama/Llama-2-7b-hf";
const m = catalogModel(ID)!;
const qlora = (unquantizedPrecision?: UnquantizedPrecision) => ({
  rank: 16,
  targetModules: ["q_proj", "v_proj"],
  quantization: "nf4" as const,
  dropout: 0,
  ...(unquantizedPrecision ? { unquantizedPrecision } : {}),
});
const request = (over: Partial<TrainingRequest> = {}): TrainingRequest =>
  trainingRequest(ID, { sequenceLength: 1024, precision: "bf16-mixed", usableGiB: 21.99, strategy: "auto", ...over });
const candidate = (over: Partial<Candidate> = {}): Candidate => single(2, over);
const breakdown = (u: UnquantizedPrecision, c: Candidate = candidate()) =>
  trainingMemory(request({ lora: qlora(u) }), c).breakdownGiB;

describe("QLoRA's unquantized parameters", () => {
  it("are fp32 by default under plain DDP, and 16-bit under ZeRO whatever was pinned", () => {
    expect(unquantizedOf(request({ lora: qlora() }), { zeroStage: 0 })).toBe("fp32");
    expect(unquantizedOf(request({ lora: qlora("bf16") }), { zeroStage: 0 })).toBe("bf16");
    expect(unquantizedOf(request({ lora: qlora() }), { zeroStage: 2 })).toBe("bf16");
    expect(unquantizedOf(request({ lora: { ...qlora(), quantization: "none" } }), { zeroStage: 0 })).toBe("bf16");
  });

  it("weigh 4 bytes each when upcast, 2 in bf16", () => {
    const extra = 2 * (m.parameters - quantizedLinearParameters(m));
    expect(breakdown("fp32").weights - breakdown("bf16").weights).toBeCloseTo(extra / GIB, 2);
  });

  it("run the blocks' elementwise ops in fp32 and keep a bf16 copy of the fp32 head", () => {
    const tokens = 2 * 1024;
    const perLayer = AUTOCAST_EXTRA.llama.upcast!.layer.i * m.intermediateSize;
    const headCopy = 2 * m.vocabSize * m.hiddenSize;
    expect(breakdown("fp32").activations - breakdown("bf16").activations).toBeCloseTo(
      (tokens * m.layers * perLayer + headCopy) / GIB,
      3,
    );
    // Checkpointed: each layer's fp32 input (2 more bytes per hidden unit) and the recomputed layer's fp32 ops.
    const ckpt = candidate({ gradientCheckpointing: true });
    expect(breakdown("fp32", ckpt).activations - breakdown("bf16", ckpt).activations).toBeCloseTo(
      (tokens * (m.layers * 2 * m.hiddenSize + perLayer) + headCopy) / GIB,
      3,
    );
  });

  it("keeps a pinned fp32 at plain DDP, where DeepSpeed would cast it to 16 bit", () => {
    const big = { gpus: 2, gpusPerNode: 2, sequenceLength: 16384, microBatchSize: 1, gradientCheckpointing: false };
    const free = planTrainingMemory(request({ ...big, lora: qlora() }));
    const pinned = planTrainingMemory(request({ ...big, lora: qlora("fp32") }));
    expect(free.knobs.zeroStage).toBeGreaterThan(0);
    expect(pinned.knobs.zeroStage).toBe(0);
    expect(pinned.decisions.find((d) => d.key === "lora.unquantizedPrecision")).toMatchObject({
      value: "fp32",
      reason: expect.stringMatching(/^pinned by the workload: .* lora\.unquantizedPrecision: bf16 keeps them/),
    });
  });

  it("is no reason to pick a ZeRO stage on one GPU, where it shards nothing; a pinned stage is kept", () => {
    const big = { sequenceLength: 16384, microBatchSize: 1, gradientCheckpointing: false };
    expect(planTrainingMemory(request({ ...big, lora: qlora() })).knobs.zeroStage).toBe(0);
    expect(planTrainingMemory(request({ ...big, zeroStage: 1, lora: qlora() })).knobs.zeroStage).toBe(1);
  });

  it("offers bf16 as a way out where the upcast is what does not fit, re-planned", () => {
    // 32k tokens: checkpoints alone keep 4 bytes per hidden unit per layer per token in fp32 (17 GB here).
    const p = planTrainingMemory(request({ sequenceLength: 32768, lora: qlora("fp32") }));
    expect(p.fits).toBe(false);
    const way = p.advice.find((a) => a.startsWith("use lora.unquantizedPrecision: bf16"));
    expect(way).toMatch(/\(the embeddings, norms and head .*; plain DDP, .*: ([\d.]+) of 21\.99 GiB\)$/);
    const bf16 = planTrainingMemory(request({ sequenceLength: 32768, lora: qlora("bf16") }));
    expect(bf16.fits).toBe(true);
    expect(way).toContain(`: ${bf16.memory.requiredGiB} of 21.99 GiB)`);
  });

  it("include a vision tower's linear layers, which transformers quantizes too", () => {
    for (const vl of Object.values(VISION_LANGUAGE_MODELS)) {
      const vision = quantizedLinearParameters(vl) - blockLinearParameters(vl);
      expect(vision).toBeGreaterThan(0.9 * vl.vision!.parameters);
      expect(vision).toBeLessThanOrEqual(vl.vision!.parameters);
    }
  });

  it("refuse a pin the runtime cannot honour, at its path, with the rule", () => {
    const base = { kind: "LoRAFineTune" as const, name: "q", model: ID, gpus: 4 };
    expect(() => new LoRAFineTune({ ...base, lora: { unquantizedPrecision: "bf16" } })).toThrow(
      /lora\.unquantizedPrecision.*applies to QLoRA only \(lora\.quantization nf4 or nf4-double\)/,
    );
    expect(
      () => new LoRAFineTune({ ...base, zeroStage: 2, lora: { quantization: "nf4", unquantizedPrecision: "fp32" } }),
    ).toThrow(/lora\.unquantizedPrecision.*fp32 needs plain DDP: DeepSpeed's 16-bit engine \(zeroStage 2\)/);
    expect(
      () => new LoRAFineTune({ ...base, lora: { quantization: "nf4", unquantizedPrecision: "bf16" } }),
    ).not.toThrow();
    // Pure bf16 trains without autocast, so the runtime casts the upcast back.
    expect(
      () =>
        new LoRAFineTune({
          ...base,
          precision: "bf16-true",
          lora: { quantization: "nf4", unquantizedPrecision: "fp32" },
        }),
    ).toThrow(
      /lora\.unquantizedPrecision.*fp32 needs mixed precision: under bf16-true the runtime trains without autocast/,
    );
    expect(unquantizedOf(request({ precision: "bf16-true", lora: qlora() }), { zeroStage: 0 })).toBe("bf16");
    // DeepSpeed in fp32 casts nothing to 16 bit.
    const fp32 = { ...base, zeroStage: 2 as const, precision: "fp32" as const };
    expect(
      () => new LoRAFineTune({ ...fp32, lora: { quantization: "nf4", unquantizedPrecision: "fp32" } }),
    ).not.toThrow();
  });
});
