/**
 * Memory planner v4: LoRA under mixed precision keeps 16-bit copies, a sharded 4-bit base keeps its quantization state
 * whole, every QLoRA backward dequantizes one weight, headroom is a share of the step's transient memory, and a plan
 * of a sharded QLoRA larger than any measured says so.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { trainingMemory } from "../../../core/memory/knob-search";
import { adapterParameters, defaultLoraTargets } from "../../../core/memory/lora";
import { NF4_STATE_BYTES_PER_PARAM, type Precision } from "../../../core/memory/model-states";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import type { Candidate, TrainingRequest } from "../../../core/memory/training-request";
import { blockLinearParameters, catalogModel, largestBlockLinear } from "../../../core/models";
import { trainingRequest } from "./published-helpers";
import { expectPlanAgreesWithItself } from "./plan-assertions";

const GIB = 2 ** 30;
const request = (id: string, over: Partial<TrainingRequest> = {}): TrainingRequest =>
  trainingRequest(id, { sequenceLength: 1024, precision: "bf16-mixed", strategy: "deepspeed", ...over });
const candidate = (over: Partial<Candidate> = {}): Candidate => ({
  zeroStage: 0,
  offload: "none",
  gradientCheckpointing: false,
  microBatchSize: 1,
  loss: "full",
  ...over,
});
const qlora = { rank: 16, targetModules: ["q_proj", "v_proj"], quantization: "nf4" as const, dropout: 0 };

describe("memory planner v4", () => {
  it("keeps 2 bytes per adapted input feature under autocast where pure bf16 keeps PEFT's 4-byte fp32 cast", () => {
    const lora = { ...qlora, quantization: "none" as const };
    const at = (precision: Precision) =>
      trainingMemory(request("meta-llama/Llama-3.1-8B", { precision, lora }), candidate()).breakdownGiB.activations;
    const m = catalogModel("meta-llama/Llama-3.1-8B")!;
    // q_proj and v_proj read the hidden state; rank projections: 16 per adapter.
    const perToken = 2 * (2 * m.hiddenSize + 2 * 16) * m.layers;
    expect(at("bf16-true") - at("bf16-mixed")).toBeCloseTo((1024 * perToken) / GIB, 3);
  });

  it("keeps the whole quantization state on every GPU when ZeRO-3 shards a 4-bit base", () => {
    const m = catalogModel("meta-llama/Llama-3.1-70B")!;
    const weights = (gpus: number) =>
      trainingMemory(
        request("meta-llama/Llama-3.1-70B", { gpus, gpusPerNode: 8, lora: qlora }),
        candidate({ zeroStage: 3 }),
      ).breakdownGiB.weights;
    const state = NF4_STATE_BYTES_PER_PARAM.nf4 * blockLinearParameters(m);
    // Fp32 adapters with their 16-bit autocast copy, whole on every GPU too.
    const adapters = 6 * adapterParameters(m, qlora.rank, qlora.targetModules);
    // Doubling the GPUs halves the sharded base only: 2 w(4) - w(2) is what every GPU keeps whole.
    expect(2 * weights(4) - weights(2)).toBeCloseTo((state + adapters) / GIB, 2);
  });

  it("counts the 16-bit copy of the largest quantized weight that a QLoRA backward dequantizes", () => {
    const m = catalogModel("meta-llama/Llama-3.1-8B")!;
    // The unquantized parameters in bf16, so the stream is the same 16-bit one as LoRA's (./unquantized-precision.test.ts).
    const lora = (quantization: "nf4" | "none") => ({ ...qlora, quantization, unquantizedPrecision: "bf16" as const });
    const acts = (quantization: "nf4" | "none") =>
      trainingMemory(request("meta-llama/Llama-3.1-8B", { lora: lora(quantization) }), candidate()).breakdownGiB
        .activations;
    expect(acts("nf4") - acts("none")).toBeCloseTo((2 * largestBlockLinear(m)) / GIB, 2);
  });

  it("adds headroom for the step's transient memory, not for the weights loaded once", () => {
    const mem = trainingMemory(request("meta-llama/Llama-3.1-8B", { lora: qlora }), candidate());
    const b = mem.breakdownGiB;
    const transient = mem.allocatedPeakGiB - b.weights - b.optimizerStates;
    expect(b.framework).toBeCloseTo(0.5 + 0.05 * transient, 2);
  });

  it("says a pinned ZeRO-3 QLoRA above 34B is unchecked, and what to do; up to 34B it does not", () => {
    const reason = (id: string) =>
      planTrainingMemory(
        request(id, { gpus: 8, gpusPerNode: 8, usableGiB: 21.99, zeroStage: 3, lora: qlora }),
      ).decisions.find((d) => d.key === "zeroStage")!.reason;
    expect(reason("meta-llama/Llama-3.1-70B")).toMatch(
      /^pinned by the workload; a sharded 4-bit base is checked against measured peaks only up to 34B .*ray-gpu report/,
    );
    expect(reason("meta-llama/Llama-2-7b-hf")).toBe("pinned by the workload");
    expect(reason("Qwen/Qwen2.5-32B")).toBe("pinned by the workload");
  });

  it("property: a pinned ZeRO-3 QLoRA at 70B fits only within the GPU, says it is unchecked, and agrees with itself", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("meta-llama/Llama-3.1-70B", "Qwen/Qwen2.5-72B"),
        fc.constantFrom(2, 4, 8, 16),
        fc.integer({ min: 256, max: 8192 }),
        fc.constantFrom(8, 16, 64),
        (id, gpus, sequenceLength, rank) => {
          const lora = {
            rank,
            targetModules: defaultLoraTargets(catalogModel(id)!),
            quantization: "nf4" as const,
            dropout: 0,
          };
          const r = request(id, { gpus, gpusPerNode: 8, sequenceLength, usableGiB: 21.99, zeroStage: 3, lora });
          const p = planTrainingMemory(r);
          expectPlanAgreesWithItself(p, 21.99);
          expect(p.decisions.find((d) => d.key === "zeroStage")!.reason).toMatch(/only up to 34B .*ray-gpu report/);
        },
      ),
      { numRuns: 40 },
    );
  });
});
