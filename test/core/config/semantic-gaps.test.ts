/**
 * Inputs that validate field by field but describe something that cannot exist or run: a tensor-parallel size vLLM
 * cannot split the model's heads over, images for a text-only model, an impossible key/value head count, a DaemonSet
 * reserve larger than the node, an old Ray image behind a registry host, and pip "pins" that pin nothing. Each is
 * refused with its path; the sound neighbour of each is accepted.
 */
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../../core/config/stack";
import { tensorParallelProblem, planServingMemory } from "../../../core/memory/plan-inference";
import { catalogModel } from "../../../core/models";
import { rayImageProblem } from "../../../core/ray";
import { configProblems, minimalConfig, type RawConfig } from "../../helpers/fixtures";

const problemsOf = (edit: (c: RawConfig) => void) => {
  const c = minimalConfig();
  edit(c);
  return configProblems(c);
};
const accepts = (edit: (c: RawConfig) => void) => {
  const c = minimalConfig();
  edit(c);
  return () => parseStackConfig(c);
};

/** A 1.5B-parameter decoder with 12 query heads and 4 key/value heads, given as an architecture. */
const ODD_HEADS = {
  parameters: 1_500_000_000,
  layers: 24,
  hiddenSize: 1536,
  attentionHeads: 12,
  kvHeads: 4,
  intermediateSize: 8960,
  vocabSize: 151_936,
  mlp: "swiglu",
};

const inference = (tensorParallelSize: number) => (c: RawConfig) => {
  c.workloads[0] = {
    kind: "BatchInference",
    name: "infer",
    model: ODD_HEADS,
    image: "example/infer:1",
    entrypoint: "python infer.py",
    gpus: 8,
    maxPromptTokens: 512,
    maxNewTokens: 256,
    tensorParallelSize,
  };
};

describe("inputs that validate but cannot exist or run", () => {
  it("refuses a tensor-parallel size that does not divide the query or key/value heads, as vLLM would", () => {
    expect(problemsOf(inference(8))).toContain(
      "ray-gpu:workloads[0].tensorParallelSize: vLLM splits the 12 attention heads evenly over the GPUs: 8 does not divide them",
    );
    expect(accepts(inference(4))).not.toThrow();
    const m = { ...catalogModel("meta-llama/Llama-3.2-1B")!, attentionHeads: 32, kvHeads: 6 };
    expect(tensorParallelProblem(m, 4)).toMatch(/6 key\/value heads/);
    expect(tensorParallelProblem({ ...m, kvHeads: 2 }, 4)).toBeUndefined(); // 2 heads, each on two GPUs
  });

  it("plans only a tensor-parallel size the model's heads allow", () => {
    const model = { ...catalogModel("meta-llama/Llama-3.1-8B")!, attentionHeads: 12, kvHeads: 12 };
    const plan = planServingMemory({
      model,
      gpus: 8,
      gpusPerNode: 8,
      maxPromptTokens: 512,
      maxNewTokens: 256,
      gpuMemoryUtilization: 0.9,
      usableGiB: 21.99,
    });
    expect(tensorParallelProblem(model, plan.tensorParallelSize)).toBeUndefined();
    expect(plan.tensorParallelSize).not.toBe(8);
  });

  it("refuses images for a text-only model, and keeps them for a vision-language one", () => {
    const lora = (model: string) => (c: RawConfig) => {
      c.workloads[0] = { ...c.workloads[0]!, kind: "LoRAFineTune", model, images: { perSample: 1 } };
    };
    expect(problemsOf(lora("meta-llama/Llama-3.2-1B"))).toContain(
      "ray-gpu:workloads[0].images: llama-3.2 models read text only (no vision tower)",
    );
    expect(accepts(lora("Qwen/Qwen2-VL-7B-Instruct"))).not.toThrow();
  });

  it("refuses a key/value head count that does not divide the query heads, and a head size that cannot be derived", () => {
    const arch = (more: object) => (c: RawConfig) => {
      c.workloads[0] = { ...c.workloads[0]!, model: { ...ODD_HEADS, ...more } };
    };
    expect(problemsOf(arch({ kvHeads: 5 }))).toContain(
      "ray-gpu:workloads[0].model.kvHeads: must divide attentionHeads (12)",
    );
    expect(problemsOf(arch({ kvHeads: 24 }))).toContain("model.kvHeads: must divide attentionHeads (12)");
    expect(problemsOf(arch({ hiddenSize: 1540 }))).toContain("model.headDim: hiddenSize (1540) is not a multiple");
    expect(accepts(arch({ hiddenSize: 1540, headDim: 128 }))).not.toThrow();
  });

  it("refuses a DaemonSet reserve that leaves a node no room for a Ray pod", () => {
    const reserve = (cpuMillis: number) => (c: RawConfig) => {
      const pools = (c.platform as { gpuNodeGroups: Record<string, unknown>[] }).gpuNodeGroups;
      pools[0] = { ...pools[0]!, instanceType: "g5.xlarge", daemonSetReserve: { cpuMillis, memoryMiB: 512 } };
      c.workloads = [];
    };
    expect(problemsOf(reserve(3500))).toMatch(
      /platform\.gpuNodeGroups\[0\]\.daemonSetReserve: leaves no room for a Ray pod: a g5\.xlarge node has 3\d{3}m CPU/,
    );
    expect(accepts(reserve(500))).not.toThrow();
  });

  it("reads the Ray version of an official image behind any registry host", () => {
    for (const image of [
      "registry-1.docker.io/rayproject/ray:2.40.0-py311-gpu",
      "123456789012.dkr.ecr.us-east-1.amazonaws.com/rayproject/ray:2.40.0-py311-gpu",
      "localhost:5000/rayproject/ray:2.40.0-py311-gpu",
    ])
      expect(rayImageProblem(image), image).toMatch(/tag "2\.40\.0-py311-gpu"/);
    expect(
      rayImageProblem("123456789012.dkr.ecr.us-east-1.amazonaws.com/rayproject/ray:2.58.0-py311-gpu"),
    ).toBeUndefined();
    expect(rayImageProblem("myorg/ray:2.40.0")).toBeUndefined(); // your own image: trusted to be built from ours
  });

  it("counts only an exact version as a pip pin", () => {
    const pip = (requirement: string) => (c: RawConfig) => {
      c.workloads[0] = { ...c.workloads[0]!, runtimeEnv: { pip: [requirement] } };
    };
    for (const loose of ["torch==*", "torch>0", "torch>=2.0", "torch~=2.13", "torch==2.*", "torch!=2.0"])
      expect(problemsOf(pip(loose)), loose).toContain("runtimeEnv.pip[0]: must pin one exact version");
    for (const pinned of ["torch==2.13.0", "torch===2.13.0", "transformers[torch]==5.18.0", "torch==2.13.0+cpu"])
      expect(accepts(pip(pinned)), pinned).not.toThrow();
  });
});
