/**
 * Memory per GPU family, against published runs on that GPU: huggingface/peft's MetaMathQA method comparison ran on an
 * L40S (results @5d602fdb, torch 2.13, transformers 5.13.1): Llama-3.2-3B in bf16, batch 4, up to 768 tokens, AdamW,
 * no gradient checkpointing. Its `accelerator_memory_max` is the most memory torch reserved (allocated plus the cache),
 * so the planner's allocated peak must be at most that and not far below it; and the verdict must be what happened: the
 * runs fit an L40S (g6e), and the full fine-tune (36.2 GiB reserved) cannot fit an A10G (g5).
 */
import { describe, expect, it } from "vitest";
import { planStack } from "../../../workloads/stack";
import { configWith, runtime } from "../../helpers/fixtures";

const GIB = 2 ** 30;
const PEFT = "huggingface/peft method_comparison/MetaMathQA/results @5d602fdb (NVIDIA L40S)";

/** The peft harness's run on one GPU of a pool of `instanceType`, as our plan sees it. */
function planOn(instanceType: string, lora: boolean) {
  const config = configWith((c) => {
    c.platform.gpuNodeGroups = [{ name: "gpu", instanceType, maxNodes: 1 }];
    c.workloads = [
      {
        kind: lora ? "LoRAFineTune" : "TrainingJob",
        name: "metamathqa",
        model: "meta-llama/Llama-3.2-3B",
        image: "example/peft:1",
        entrypoint: "python run.py",
        gpus: 1,
        sequenceLength: 768,
        globalBatchSize: 4,
        microBatchSize: 4,
        precision: "bf16-true",
        gradientCheckpointing: false,
        optimizer: "adamw",
        ...(lora ? { lora: { rank: 32, targetModules: ["q_proj", "v_proj"], quantization: "none" } } : {}),
      },
    ];
  });
  return planStack(config, { runtime }).workloads[0]!.memory;
}

const RUNS = [
  { id: "full-finetuning--llama-3.2-3B-lr_0.00001", lora: false, reservedMaxBytes: 38_868_615_168 },
  { id: "lora--llama-3.2-3B-rank32 (q_proj, v_proj)", lora: true, reservedMaxBytes: 22_292_725_760 },
] as const;

describe("GPU memory per family, against runs published on that GPU", () => {
  for (const run of RUNS)
    it(`L40S: ${run.id} fits a g6e.xlarge, its allocated peak 85-100% of what torch reserved (${PEFT})`, () => {
      const m = planOn("g6e.xlarge", run.lora);
      expect(m.fits).toBe(true);
      const ratio = m.memory.allocatedPeakGiB / (run.reservedMaxBytes / GIB);
      expect(ratio).toBeGreaterThanOrEqual(0.85);
      expect(ratio).toBeLessThanOrEqual(1.0);
    });

  it("A10G: the full fine-tune that reserved 36.2 GiB on the L40S does not fit a g5.2xlarge, whatever the knobs", () => {
    expect(planOn("g5.2xlarge", false).fits).toBe(false);
  });
});
