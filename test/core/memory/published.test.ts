/**
 * Predictions against published measurements. The cases and their sources live in ./published-cases.ts (the table in
 * docs/memory.md is generated from them); each rule's tolerance is there too. Also here: NF4 weight sizes (LitGPT),
 * vLLM's logged KV cache and Ray's A10G serving concurrency.
 * Not used: LitGPT's QLoRA training rows (their peaks follow loading the bf16 checkpoint, not training: e.g.
 * llama-2-7b QLoRA 13.68 GB ≈ its 13.48 GB of bf16 weights) and its multi-GPU full fine-tuning rows (FSDP).
 */
import { describe, expect, it } from "vitest";
import { catalogModel, blockLinearParameters } from "../../../core/models";
import { adapterParameters } from "../../../core/memory/lora";
import { estimateLlmServing } from "../../../core/memory/estimate-inference";
import { NF4_BYTES_PER_PARAM } from "../../../core/memory/model-states";
import { planServingMemory } from "../../../core/memory/plan-inference";
import { ACCELERATORS } from "../../../core/catalog/accelerators";

const A10G_CUDA_TOTAL_GIB = ACCELERATORS.A10G.cudaTotalGiB;
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CASES_BEGIN, CASES_END, sectionOf } from "../../../scripts/generate";
import { repoRoot } from "../../helpers/fixtures";
import { PUBLISHED_CASES, publishedTable, TOLERANCE } from "./published-cases";
import { OOM_CASES } from "./published-cases-v3";
import { BLOOM_OOM_CASES } from "./published-cases-bloom";
import { ANSWERAI_TARGETS, FIT_CASES, LLAMA_2_70B, peftLlama2_70bQlora } from "./published-cases-v4";
import { GIB, single, train, trainingRequest } from "./published-helpers";
import { planTrainingMemory } from "../../../core/memory/plan-training";
import { AT_MOST_24GB, SCALE_FIT_CASES, SCALE_OOM_CASES, TIGHTEST_70B_RUN } from "./published-cases-scale";

const GB = 1e9;

describe("no plan fits where a source measured an out-of-memory", () => {
  it.each([...OOM_CASES, ...BLOOM_OOM_CASES, ...SCALE_OOM_CASES].map((c) => [c.id, c] as const))("%s", (_, c) => {
    expect(c.plan().fits).toBe(false);
  });
});

describe("a plan fits where a source ran in no more memory", () => {
  it.each([...FIT_CASES, ...SCALE_FIT_CASES].map((c) => [c.id, c] as const))("%s", (_, c) => {
    expect(c.plan().fits).toBe(true);
  });
});

describe("Answer.AI's Llama-2-70B QLoRA on four 24 GB GPUs, the bound docs/memory.md states", () => {
  it("derives the room the run left, and the adapters the plan counts high, from the plan", () => {
    const { run, gpus } = TIGHTEST_70B_RUN;
    const required = run.plan().requiredGiB;
    const adaptersGiB = (4 * adapterParameters(LLAMA_2_70B, 64, ANSWERAI_TARGETS)) / GIB;
    const room = AT_MOST_24GB - required;
    const ceil1 = (x: number) => (Math.ceil(x * 10) / 10).toFixed(1);
    const docs = readFileSync(join(repoRoot, "docs/memory.md"), "utf8").replace(/\n\s*/g, " ");
    expect(docs).toContain(`the plan needs ${required.toFixed(2)} GiB and the cards offer at most ${AT_MOST_24GB}`);
    expect(docs).toContain(`net of what it counts high, is under ${ceil1(room)} GiB per GPU`);
    expect(docs).toContain(`whole on every GPU (${adaptersGiB.toFixed(1)} GiB at rank 64)`);
    expect(docs).toContain(`FSDP shards them (${(adaptersGiB / gpus).toFixed(1)} GiB on four)`);
    expect(docs).toContain(`add up to under ${ceil1(room + adaptersGiB * (1 - 1 / gpus))} GiB per GPU`);
  });
});

describe("BERT-large training, measured on CPU and restated for CUDA (calibration/measure_encoder_step.py)", () => {
  const measured = JSON.parse(readFileSync(join(repoRoot, "test/data/encoder-step-calibration.json"), "utf8")) as {
    cpuWithDropout: number;
    cudaEquivalent: number;
  };
  // The page's settings: fp32, eager attention, transformers' for-loop AdamW, 512 tokens.
  const page = {
    sequenceLength: 512,
    usableGiB: A10G_CUDA_TOTAL_GIB,
    precision: "fp32",
    attention: "eager",
    optimizerStep: "for-loop",
  } as const;
  const plan = train("BAAI/bge-large-en-v1.5", page, single(4));

  it("plans the step's allocated peak to 1% of the measured one", () => {
    const ratio = (plan.allocatedPeakGiB * GIB) / measured.cudaEquivalent;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  // The page's batch 1 with 4 gradient-accumulation steps: 8,681 MB of device memory, its CUDA context 1,343 MB.
  const accumulating = train("BAAI/bge-large-en-v1.5", { ...page, globalBatchSize: 4 }, single(1));
  const alone = train("BAAI/bge-large-en-v1.5", page, single(1));
  const beyondContext = (8681 - 1343) * 1e6;

  it("plans the page's accumulating batch of 1 within what its device held beyond the context", () => {
    const ratio = (accumulating.allocatedPeakGiB * GIB) / beyondContext;
    expect(ratio).toBeGreaterThanOrEqual(0.95);
    expect(ratio).toBeLessThanOrEqual(1);
  });

  it("states the figures docs/memory.md compares", () => {
    const gb = (bytes: number) => (bytes / GB).toFixed(2);
    const ratio = ((accumulating.allocatedPeakGiB * GIB) / beyondContext).toFixed(2);
    const docs = readFileSync(join(repoRoot, "docs/memory.md"), "utf8").replace(/\n\s*/g, " ");
    expect(docs).toContain(`${gb(measured.cpuWithDropout)} GB at the peak`);
    expect(docs).toContain(`the step peaks at ${gb(measured.cudaEquivalent)} GB`);
    expect(docs).toContain(`the plan of those settings allocates ${gb(plan.allocatedPeakGiB * GIB)} GB`);
    expect(docs).toContain(`\`requiredGiB\` (${gb(plan.requiredGiB * GIB)} GB)`);
    expect(docs).toContain(
      `allocates ${gb(accumulating.allocatedPeakGiB * GIB)} GB, ${ratio} of those 7,338 MB; ` +
        `without the held gradients it would allocate ${gb(alone.allocatedPeakGiB * GIB)} GB`,
    );
  });
});

describe("PEFT's Llama-2-70B QLoRA on 2 GPUs, the gap docs/memory.md states", () => {
  it("plans the figure the docs compare with PEFT's 35.6 and 36.6 GB per GPU", () => {
    const required = peftLlama2_70bQlora().requiredGiB.toFixed(1);
    const docs = readFileSync(join(repoRoot, "docs/memory.md"), "utf8");
    expect(docs).toContain(`where the plan of those settings\n  needs ${required} GiB`);
  });

  it("states the gap in the docs and in a pinned 70B ZeRO-3 QLoRA plan's reason as the plan computes it", () => {
    const plan = peftLlama2_70bQlora();
    const short = (gb: number, planned: number) => ((gb * GB) / GIB - planned).toFixed(1);
    const docs = readFileSync(join(repoRoot, "docs/memory.md"), "utf8").replace(/\n\s*/g, " ");
    expect(docs).toContain(
      `${short(35.6, plan.requiredGiB)} and ${short(36.6, plan.requiredGiB)} GiB short ` +
        `(${short(35.6, plan.allocatedPeakGiB)} and ${short(36.6, plan.allocatedPeakGiB)} GiB short of them`,
    );
    const reason = planTrainingMemory(
      trainingRequest("meta-llama/Llama-3.1-70B", {
        gpus: 4,
        gpusPerNode: 4,
        usableGiB: A10G_CUDA_TOTAL_GIB,
        zeroStage: 3,
        lora: { rank: 16, targetModules: ["q_proj", "v_proj"], quantization: "nf4", dropout: 0 },
      }),
    ).decisions.find((d) => d.key === "zeroStage")!.reason;
    expect(reason).toContain(
      `reported up to ${short(36.6, plan.requiredGiB)} GiB per GPU more than such a plan requires`,
    );
  });
});

describe("memory predictions vs published measurements", () => {
  it.each(PUBLISHED_CASES.map((c) => [c.id, c.rule, c] as const))("%s (%s)", (_, rule, c) => {
    const predicted = c.predicted();
    if (rule === "estimator") {
      // DeepSpeed prints two decimals: modelStates must match to 0.01 GiB.
      expect(Math.abs(predicted - c.measured)).toBeLessThanOrEqual(0.01);
      return;
    }
    const [low, high] = TOLERANCE[rule];
    expect(predicted / c.measured).toBeGreaterThanOrEqual(low);
    expect(predicted / c.measured).toBeLessThanOrEqual(high);
  });

  it("NF4 weights: Llama 2 7B inference peaks 4.57 GB (nf4) and 4.26 GB (nf4-dq) in LitGPT's table", () => {
    const m = catalogModel("meta-llama/Llama-2-7b-hf")!;
    const linear = blockLinearParameters(m);
    const weights = (q: "nf4" | "nf4-double") => 2 * (m.parameters - linear) + NF4_BYTES_PER_PARAM[q] * linear;
    // Weights alone stay under the measured inference peaks (which add a KV cache and activations)...
    expect(weights("nf4") / GB).toBeLessThan(4.57);
    expect(weights("nf4") / GB).toBeGreaterThan(0.85 * 4.57);
    // ...and double quantization saves what LitGPT measured (4.57 - 4.26 = 0.31 GB) to 0.02 GB.
    expect(Math.abs((weights("nf4") - weights("nf4-double")) / GB - 0.31)).toBeLessThan(0.02);
  });

  it.each([
    [20000, 3.81],
    [29000, 2.89],
  ])("vLLM KV cache of Llama-3.1-8B on a 23.58 GiB GPU at max_model_len %i: logged %f GiB", (maxModelLen, kvGiB) => {
    const e = estimateLlmServing({
      model: catalogModel("meta-llama/Llama-3.1-8B-Instruct")!,
      tensorParallel: 1,
      gpuMemoryUtilization: 0.9,
      maxBatchedTokens: maxModelLen,
      samplerSequences: 0, // V0 engine (vLLM 0.6): no sampling in its profile
      usableGiB: 23.58,
    });
    expect(e.kvCacheBytesPerToken).toBe(131072);
    expect(e.breakdownGiB.kvCache / kvGiB).toBeGreaterThan(0.95);
    expect(e.breakdownGiB.kvCache / kvGiB).toBeLessThan(1.05);
  });

  it("vLLM KV cache at max_model_len 35000 with chunked prefill (512 tokens) on the same GPU: about 5.82 GiB", () => {
    // vLLM's kv_cache_size = total × utilization − peak_torch − non_torch = 23.58 × 0.9 − 15.05 − 0.35 (#10517, 35k).
    const e = estimateLlmServing({
      model: catalogModel("meta-llama/Llama-3.1-8B-Instruct")!,
      tensorParallel: 1,
      gpuMemoryUtilization: 0.9,
      maxBatchedTokens: 512,
      samplerSequences: 0, // V0 engine (vLLM 0.6): no sampling in its profile
      usableGiB: 23.58,
    });
    const logged = 23.58 * 0.9 - 15.05 - 0.35;
    expect(e.breakdownGiB.kvCache / logged).toBeGreaterThan(0.98);
    expect(e.breakdownGiB.kvCache / logged).toBeLessThan(1.02);
  });

  it("Llama-3.1-8B on an A10G holds about 3.5 sequences of 8192 tokens (Ray's LLM serving guide)", () => {
    const p = planServingMemory({
      model: catalogModel("meta-llama/Llama-3.1-8B-Instruct")!,
      gpus: 1,
      gpusPerNode: 1,
      maxPromptTokens: 4096,
      maxNewTokens: 4096,
      gpuMemoryUtilization: 0.9,
      usableGiB: A10G_CUDA_TOTAL_GIB,
    });
    const concurrency = p.memory.kvCacheTokens / 8192;
    expect(concurrency).toBeGreaterThan(3.2);
    expect(concurrency).toBeLessThan(3.9);
    expect(p.maxConcurrentSequences).toBe(3);
  });
});

describe("docs/memory.md", () => {
  it("shows the table generated from these cases (run npm run generate after changing them or the planner)", () => {
    const doc = readFileSync(join(repoRoot, "docs/memory.md"), "utf8");
    expect(sectionOf(doc, CASES_BEGIN, CASES_END)).toBe(publishedTable());
  });
});
