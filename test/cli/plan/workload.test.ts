import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../../cli/main";
import { standaloneCpuInstanceType } from "../../../cli/input/workload-file";
import { repoRoot } from "../../helpers/fixtures";

/** Writes a workload file into a fresh temporary folder and returns its path. */
function workloadFile(yaml: string, name = "w.yaml"): string {
  const file = join(mkdtempSync(join(tmpdir(), "ray-gpu-")), name);
  writeFileSync(file, yaml);
  return file;
}

async function planJson(file: string, ...extra: string[]) {
  let out = "";
  let err = "";
  const code = await main(["plan", "--workload", file, "--json", ...extra], {
    out: (s) => (out += s),
    err: (s) => (err += s),
    cwd: repoRoot,
  });
  return { code, err, doc: JSON.parse(out) as { workloads: Record<string, unknown>[] } };
}

const example = (f: string) => join(repoRoot, "examples/workloads", f);
const KNOBS = [
  "microBatchSize",
  "gradientAccumulationSteps",
  "zeroStage",
  "offload",
  "gradientCheckpointing",
  "attentionImplementation",
  "loss",
  "gpus",
];
const BREAKDOWN = [
  "weights",
  "gradients",
  "optimizerStates",
  "activations",
  "logits",
  "kvCache",
  "framework",
  "modelStates",
  "communicationBuffers",
];

describe("ray-gpu plan --workload --json", () => {
  it.each(["lora-llama-3.1-8b.yaml", "qlora-qwen2-vl-7b.yaml", "training-pinned.yaml"])(
    "answers for training kinds with memory, knobs and decisions: %s",
    async (f) => {
      const { code, doc } = await planJson(example(f));
      expect(code).toBe(0);
      const w = doc.workloads[0]!;
      for (const k of KNOBS) expect(w).toHaveProperty(k);
      const memory = w["memory"] as {
        allocatedPeakGiB: number;
        requiredGiB: number;
        breakdownGiB: Record<string, number>;
      };
      expect(Object.keys(memory.breakdownGiB).sort()).toEqual([...BREAKDOWN].sort());
      expect(memory.requiredGiB).toBeGreaterThan(memory.allocatedPeakGiB);
      expect(w["fits"]).toBe(true);
      expect((w["decisions"] as { key: string }[]).map((d) => d.key)).toEqual(
        expect.arrayContaining([
          "zeroStage",
          "offload",
          "gradientCheckpointing",
          "microBatchSize",
          "gradientAccumulationSteps",
        ]),
      );
    },
  );

  it("plans a workload file without an image quietly, and still reports other reasons not to render", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ray-gpu-plan-"));
    const run = async (file: string) => {
      let out = "";
      const code = await main(["plan", "--workload", file], { out: (s) => (out += s), err: () => {}, cwd: repoRoot });
      return { code, out };
    };
    const planned = await run(example("lora-llama-3.1-8b.yaml"));
    expect(planned.code).toBe(0);
    expect(planned.out).not.toMatch(/Not rendered/);
    const big = join(dir, "big.yaml");
    writeFileSync(big, "kind: TrainingJob\nname: big\nmodel: meta-llama/Llama-3.1-70B\ngpus: 4\nstrategy: ddp\n");
    const misfit = await run(big);
    expect(misfit.code).toBe(1);
    // The reason is wrapped at 120 columns: its continuation lines joined back.
    expect(misfit.out.replace(/\n +/g, " ")).toMatch(/Not rendered: big: .*TrainingJob "big"\.gpus: does not fit/);
  });

  it("keeps pinned knobs and says so", async () => {
    const w = (await planJson(example("training-pinned.yaml"))).doc.workloads[0]!;
    expect(w).toMatchObject({
      microBatchSize: 2,
      zeroStage: 2,
      offload: "none",
      gradientCheckpointing: true,
      gradientAccumulationSteps: 8,
    });
  });

  it("answers for EmbeddingPipeline (batch size) and BatchInference (KV cache, concurrency)", async () => {
    const e = (await planJson(example("embedding-bge-large.yaml"))).doc.workloads[0]!;
    expect(e).toMatchObject({ kind: "EmbeddingPipeline", fits: true, sequenceLength: 512 });
    expect(e["batchSize"]).toBeGreaterThan(0);
    const b = (await planJson(example("inference-llama-3.1-8b.yaml"))).doc.workloads[0]!;
    expect(b).toMatchObject({
      kind: "BatchInference",
      kvCacheBytesPerToken: 131072,
      tensorParallelSize: 1,
      replicas: 4,
      fits: true,
    });
    expect(b["maxConcurrentSequences"]).toBeGreaterThanOrEqual(4);
  });

  it.each(["g5.xlarge", "g5.2xlarge"])(
    "plans 16 single-GPU %s nodes: the standalone CPU pool is sized for the head of 16 workers",
    async (instanceType) => {
      const model = "model: BAAI/bge-large-en-v1.5";
      const data = 'dataset: { uri: "s3://bucket/c/", format: parquet, rows: 1000000, avgTextChars: 1200 }';
      const file = workloadFile(
        `kind: EmbeddingPipeline\nname: e16\n${model}\n${data}\ngpus: 16\ninstanceType: ${instanceType}\n`,
      );
      const { code, err, doc } = await planJson(file);
      expect(err).toBe("");
      expect(code).toBe(0);
      expect(doc.workloads[0]).toMatchObject({ kind: "EmbeddingPipeline", fits: true });
      expect(standaloneCpuInstanceType(16)).toBe("m6i.4xlarge");
      expect(standaloneCpuInstanceType(1)).toBe("m6i.2xlarge");
    },
  );

  it("prints the plan with fits: false and exits 1 when nothing fits", async () => {
    const file = workloadFile(
      "kind: TrainingJob\nname: huge\nmodel: meta-llama/Llama-3.1-70B\ngpus: 1\ninstanceType: g5.xlarge\nstrategy: ddp\n",
      "huge.yaml",
    );
    const { code, err, doc } = await planJson(file);
    expect(code).toBe(1);
    expect(doc.workloads[0]).toMatchObject({ fits: false });
    expect(err).toContain(`ray-gpu: ${file}: 1 workload does not fit\n`);
    expect(err).toMatch(/✖ huge: does not fit: needs [\d.]+ GiB per GPU/);
  });

  it("names the file and the workload in a plan's problem, as a stack file does its entry", async () => {
    const file = workloadFile(readFileSync(example("training-pinned.yaml"), "utf8").replace("gpus: 8", "gpus: 6"));
    let err = "";
    const code = await main(["plan", "--workload", file], { out: () => {}, err: (s) => (err += s), cwd: repoRoot });
    expect(code).toBe(1);
    expect(err).toBe(
      `ray-gpu: invalid input\n${file}: 1 problem\n` +
        '  ✖ TrainingJob "pretrain-1b".gpus: must be a multiple of 4 (GPUs per g5.12xlarge node of pool "gpu"): use 4 ' +
        "or 8, or a pool of 1-GPU instances (got 6)\n",
    );
  });

  it("rejects a global batch that does not split over the GPUs", async () => {
    const file = workloadFile(
      "kind: LoRAFineTune\nname: w\nmodel: meta-llama/Llama-3.1-8B\ngpus: 8\nglobalBatchSize: 60\n",
    );
    let err = "";
    const code = await main(["plan", "--workload", file], { out: () => {}, err: (s) => (err += s), cwd: repoRoot });
    expect(code).toBe(1);
    expect(err).toContain(
      '✖ LoRAFineTune "w".globalBatchSize: must be a multiple of gpus (8) so every GPU gets the same share; use 64 (got 60)',
    );
  });

  it("refuses a vLLM memory share that leaves less than the CUDA context, under gpuMemoryUtilization", async () => {
    const file = workloadFile(
      "kind: BatchInference\nname: v\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpus: 1\ninstanceType: g5.2xlarge\n" +
        "maxPromptTokens: 1024\nmaxNewTokens: 256\ngpuMemoryUtilization: 0.98\n",
    );
    let err = "";
    const code = await main(["plan", "--workload", file], { out: () => {}, err: (s) => (err += s), cwd: repoRoot });
    expect(code).toBe(1);
    expect(err).toContain(
      '✖ BatchInference "v".gpuMemoryUtilization: gives vLLM 21.55 GiB of the 21.99 GiB GPU and leaves 0.44 GiB',
    );
    expect(err).toContain("use at most 0.97 (got 0.98)");
  });

  it("plans a GPT-NeoX architecture with its own layout and LoRA targets", async () => {
    const file = workloadFile(
      "kind: LoRAFineTune\nname: neox\ngpus: 1\ninstanceType: g5.2xlarge\nsequenceLength: 512\n" +
        "lora: { rank: 32, targetModules: [query_key_value] }\n" +
        "model: { parameters: 3637321728, layers: 16, hiddenSize: 4096, attentionHeads: 32, intermediateSize: 16384, " +
        "vocabSize: 50688, mlp: gelu, gptBlock: gpt-neox }\n",
    );
    const { code, doc } = await planJson(file);
    expect(code).toBe(0);
    expect(doc.workloads[0]).toMatchObject({ fits: true, optimizerStep: "fused" });
  });

  it("plans a BLOOM architecture with eager attention, its only one, and GPT-NeoX's module names", async () => {
    const file = workloadFile(
      "kind: LoRAFineTune\nname: bloom\ngpus: 1\ninstanceType: g5.2xlarge\nsequenceLength: 512\n" +
        "lora: { rank: 8, targetModules: [query_key_value, dense_4h_to_h] }\n" +
        "model: { parameters: 7069016064, layers: 30, hiddenSize: 4096, attentionHeads: 32, intermediateSize: 16384, " +
        "vocabSize: 250880, mlp: gelu, gptBlock: bloom, tiedEmbeddings: true }\n",
    );
    const { code, doc } = await planJson(file);
    expect(code).toBe(0);
    expect(doc.workloads[0]).toMatchObject({ fits: true, attentionImplementation: "eager" });
  });

  it("plans Falcon-7B's layout with the leaner attention for its precision, and refuses QLoRA with the fix", async () => {
    const model =
      "model: { parameters: 6921720704, layers: 32, hiddenSize: 4544, attentionHeads: 71, kvHeads: 1, " +
      "intermediateSize: 18176, vocabSize: 65024, mlp: gelu, gptBlock: falcon, tiedEmbeddings: true }\n";
    const head = "kind: LoRAFineTune\nname: falcon\ngpus: 1\ninstanceType: g5.2xlarge\nsequenceLength: 1024\n";
    const { code, doc } = await planJson(workloadFile(head + model));
    expect(code).toBe(0);
    // bf16-mixed (the default): SDPA's math kernel keeps 4 bytes per score where eager under autocast keeps 6.
    expect(doc.workloads[0]).toMatchObject({ fits: true, attentionImplementation: "sdpa" });
    const pure = await planJson(workloadFile(`${head}precision: bf16-true\n${model}`));
    expect(pure.doc.workloads[0]).toMatchObject({ fits: true, attentionImplementation: "eager" });
    let err = "";
    const file = workloadFile(`${head}lora: { quantization: nf4 }\n${model}`);
    const refused = await main(["plan", "--workload", file], { out: () => {}, err: (s) => (err += s), cwd: repoRoot });
    expect(refused).toBe(1);
    expect(err).toContain('✖ LoRAFineTune "falcon".lora.quantization: custom models (gptBlock: falcon) build');
    expect(err).toContain("use lora.quantization: none (LoRA over the bf16 base)");
  });

  it("plans Falcon-40B's new decoder layout with SDPA over 8 A10Gs, sharded with ZeRO-3", async () => {
    const file = workloadFile(
      "kind: LoRAFineTune\nname: falcon40\ngpus: 8\ninstanceType: g5.48xlarge\nsequenceLength: 1024\nmodel: { " +
        "parameters: 41835970560, layers: 60, hiddenSize: 8192, attentionHeads: 128, kvHeads: 8, intermediateSize: " +
        "32768, vocabSize: 65024, mlp: gelu, gptBlock: falcon-new-decoder }\n",
    );
    const { code, doc } = await planJson(file);
    expect(code).toBe(0);
    expect(doc.workloads[0]).toMatchObject({ fits: true, attentionImplementation: "sdpa", zeroStage: 3 });
  });

  it.each([
    ["transformers==4.40.2", "", 1],
    ["transformers==4.40.2", "loss: chunked\n", 0],
    ["transformers==4.49.0", "", 0],
    ["transformers==5.18.0", "", 0],
  ])("checks a pinned %s against the loss the plan counts (%s)", async (pin, loss, want) => {
    const file = workloadFile(
      `kind: LoRAFineTune\nname: w\nmodel: meta-llama/Llama-3.1-8B\ngpus: 1\ninstanceType: g5.2xlarge\n${loss}` +
        `runtimeEnv: { pip: ["${pin}"] }\n`,
    );
    let err = "";
    const code = await main(["plan", "--workload", file], { out: () => {}, err: (s) => (err += s), cwd: repoRoot });
    expect(code).toBe(want);
    if (want === 1)
      expect(err).toContain(
        '✖ LoRAFineTune "w".runtimeEnv.pip[0]: transformers 4.40.2 computes the loss on a shifted fp32 copy of the logits',
      );
  });

  it("accepts a model given by its architecture", async () => {
    const file = workloadFile(
      "kind: LoRAFineTune\nname: custom\ngpus: 1\ninstanceType: g5.2xlarge\nsequenceLength: 1024\nmodel: { " +
        "parameters: 3000000000, layers: 26, hiddenSize: 3072, attentionHeads: 24, kvHeads: 8, intermediateSize: " +
        "8192, vocabSize: 32000, mlp: swiglu }\n",
    );
    const { code, doc } = await planJson(file);
    expect(code).toBe(0);
    expect(doc.workloads[0]).toMatchObject({ model: "custom", fits: true });
  });
});
