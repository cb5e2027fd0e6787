/**
 * Published GPU-memory measurements the planner is checked against: one definition for the test
 * (published.test.ts) and the table in docs/memory.md (`npm run generate`).
 *
 * Rules:
 * - `peak`: a measured peak (max_memory_allocated or active bytes). The prediction is never below 95% of it and at
 *   most 15% above.
 * - `reserved`: a measured peak of the allocator's reservation (max_memory_reserved), which exceeds the allocated peak
 *   by what fragmentation leaves: the predicted allocated peak is 85–110% of it.
 * - `gap`: the eager − SDPA difference of two measured peaks, same rule, so the attention term is checked alone.
 * - `states`: memory after the optimizer step (model states only), within 5%.
 * - `slope`: the growth of device memory between two settings (NVML), prediction not below 95%, at most 15% above.
 * - `estimator`: DeepSpeed's printed tables, reproduced to 0.01 GiB by `modelStates`.
 * - `lower-bound`: a run with an optimisation the planner does not model (torch.compile); the prediction must not be
 *   below 95% of it.
 */
import { attentionTrainingBytesPerToken } from "../../../core/memory/attention";
import { estimateEncoderInference, estimateLlmServing } from "../../../core/memory/estimate-inference";
import { catalogModel } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";
import { GIB, single, train, UNIT_BYTES, type PublishedCase, type Rule } from "./published-helpers";
import { SERVING_V019_CASES, TRAINING_V3_CASES } from "./published-cases-v3";
import { FMS_QLORA_CASES, FSDP_QLORA_CASES } from "./published-cases-v4";
import { SCALE_CASES } from "./published-cases-scale";
import { BLOOM_CASES } from "./published-cases-bloom";
import { FALCON_CASES } from "./published-cases-falcon";

export type { PublishedCase, Rule } from "./published-helpers";

/**
 * BERT-style encoders of the SDPA benchmarks (bert-base-uncased, distilbert-base-uncased, albert-base-v2): BERT-base
 * blocks (bge-base-en-v1.5 is one) with the benchmark's layer count and dropout.
 */
function encoder(layers: number, attentionDropout: number): ModelArchitecture {
  return {
    ...catalogModel("BAAI/bge-base-en-v1.5")!,
    layers,
    attention: {
      implementations: ["sdpa", "eager"],
      attentionDropout,
      hiddenDropout: attentionDropout,
      softmaxInFp32: false,
      relativePositionBias: false,
    },
  };
}

/** vLLM serving of Llama-3.1-8B on the 23.58 GiB RTX 3090 of vllm-project/vllm#10517, profiled at `tokens`. */
const serving = (tokens: number) =>
  estimateLlmServing({
    model: catalogModel("meta-llama/Llama-3.1-8B-Instruct")!,
    tensorParallel: 1,
    gpuMemoryUtilization: 0.9,
    maxBatchedTokens: tokens,
    // The V0 engine of that log (vLLM 0.6) shows no sampling in its profile's peak (15.05 GiB at 512 tokens).
    samplerSequences: 0,
    usableGiB: 23.58,
  });

/** Eager − SDPA bytes of a 16-bit forward and backward: the attention term alone. */
function eagerGap(m: ModelArchitecture, batch: number, seq: number, unit: keyof typeof UNIT_BYTES): number {
  const perToken =
    attentionTrainingBytesPerToken(m, "eager", { seq, bytesPerActivation: 2 }) -
    attentionTrainingBytesPerToken(m, "sdpa", { seq, bytesPerActivation: 2 });
  return (batch * seq * m.layers * perToken) / UNIT_BYTES[unit];
}

const BERT_SDPA =
  "transformers BERT docs, SDPA benchmark (PR huggingface/transformers#28802): bert-base-uncased, A100, fp16, " +
  "forward + backward, dropout 0.1, max_memory_allocated";
const DISTILBERT = "transformers DistilBERT docs, SDPA benchmark: distilbert-base-uncased, RTX 2060, fp16, dropout 0.1";
const ALBERT =
  "transformers ALBERT docs, SDPA benchmark (PR huggingface/transformers#32092): albert-base-v2, RTX 2060, fp16, " +
  "no attention dropout";

/** Eager − SDPA cases of one benchmark table: rows of [batch, seq, eager MB, sdpa MB]. */
function gapCases(
  label: string,
  source: string,
  m: ModelArchitecture,
  rows: readonly (readonly [number, number, number, number])[],
): PublishedCase[] {
  return rows.map(([b, s, eager, sdpa]) => ({
    id: `${label} eager−sdpa ${b}×${s}`,
    source,
    what: `eager ${eager} MB − sdpa ${sdpa} MB`,
    rule: "gap",
    unit: "MB",
    measured: Math.round((eager - sdpa) * 1000) / 1000,
    predicted: () => eagerGap(m, b, s, "MB"),
  }));
}

const attentionCases: PublishedCase[] = [
  ...gapCases("bert-base", BERT_SDPA, encoder(12, 0.1), [
    [16, 512, 6964.659, 3961.013],
    [8, 512, 3629.401, 2134.262],
    [4, 512, 1970.447, 1227.162],
    [16, 256, 2874.426, 2134.262],
    [8, 256, 1594.295, 1226.114],
    [4, 256, 939.213, 764.834],
  ]),
  ...gapCases("distilbert", DISTILBERT, encoder(6, 0.1), [
    [8, 256, 983.45, 798.48],
    [4, 256, 594.156, 502.745],
  ]),
  ...gapCases("albert", ALBERT, encoder(12, 0), [
    [8, 512, 2820.398, 2219.695],
    [4, 512, 1434.82, 1134.14],
  ]),
];

const LITGPT_A10G =
  "LitGPT config_hub/finetune/README.md @03ffc5515b25: LoRA r=32 on query+value, bf16-true, Alpaca2k (512), 1×A10G, " +
  "max_memory_allocated / 1e9";
const LITGPT_A100 =
  "LitGPT tutorials/resource-tables.md @4839345a97a0: LoRA r=8 query+value, bf16-true, Alpaca's longest sample " +
  "(1304 tokens), A100 40GB";
/** LoRA on query and value (LitGPT's configs: lora_dropout 0.05; torchtune's recipes: 0.0). */
const lora = (rank: number, dropout = 0.05) => ({
  rank,
  targetModules: ["q_proj", "v_proj"],
  quantization: "none" as const,
  dropout,
});

const peakCases: PublishedCase[] = [
  ...(
    [
      ["meta-llama/Llama-2-7b-hf", 2, 512, 32, 19.77, LITGPT_A10G],
      ["meta-llama/Llama-3.1-8B", 1, 512, 32, 19.73, LITGPT_A10G],
      ["mistralai/Mistral-7B-v0.1", 2, 512, 32, 20.66, LITGPT_A10G],
      ["meta-llama/Llama-2-7b-hf", 1, 1304, 8, 21.3, LITGPT_A100],
      ["meta-llama/Llama-2-7b-hf", 2, 1304, 8, 29.07, LITGPT_A100],
      ["meta-llama/Llama-2-13b-hf", 1, 1304, 8, 38.12, LITGPT_A100],
    ] as const
  ).map(([id, mb, seq, rank, gb, source]) => ({
    id: `${id.split("/")[1]} LoRA r${rank} ${mb}×${seq}`,
    source,
    what: "peak, full loss, sdpa",
    rule: "peak" as const,
    unit: "GB" as const,
    measured: gb,
    predicted: () => (train(id, { sequenceLength: seq, lora: lora(rank) }, single(mb)).allocatedPeakGiB * GIB) / 1e9,
  })),
  {
    id: "Llama-3.2-3B full FT 2×4096 packed",
    source:
      'torchtune README "Optimization flags" @bd2a0fc7: full_finetune_single_device, bs 2, packed 4096, bf16, AdamW, ' +
      "A100, no compile, no activation checkpointing, peak active memory",
    what: "full loss, sdpa",
    rule: "peak",
    unit: "GiB",
    measured: 60.0,
    predicted: () => train("meta-llama/Llama-3.2-3B", { sequenceLength: 4096 }, single(2)).allocatedPeakGiB,
  },
  {
    id: "Llama-3.1-8B LoRA r8 2×2048 (4090)",
    source:
      'torchtune README "Memory and training speed" @30b8519e: llama3_1/8B_lora_single_device (q,v, rank 8), bs 2, ' +
      "packed 2048, bf16, AdamW, activation checkpointing, chunked cross-entropy, RTX 4090",
    what: "chunked loss, checkpointing",
    rule: "peak",
    unit: "GiB",
    measured: 16.2,
    predicted: () =>
      train(
        "meta-llama/Llama-3.1-8B",
        { lora: lora(8, 0) },
        single(2, { gradientCheckpointing: true, loss: "chunked" }),
      ).allocatedPeakGiB,
  },
];

const otherCases: PublishedCase[] = [
  {
    id: "Llama-3.2-3B full FT + chunked CE (with compile)",
    source: 'torchtune README "Optimization flags": the "+ Chunked Cross Entropy" row, after "+ Compile"',
    what: "chunked loss; torch.compile (not modelled) lowers activations",
    rule: "lower-bound",
    unit: "GiB",
    measured: 42.9,
    predicted: () =>
      train("meta-llama/Llama-3.2-3B", { sequenceLength: 4096 }, single(2, { loss: "chunked" })).allocatedPeakGiB,
  },
  {
    id: "Llama-3.2-3B full FT, after the step",
    source:
      "huggingface/peft method_comparison/MetaMathQA results @5d602fdb: full fine-tuning, bf16, AdamW, L40S, " +
      "memory_allocated after the optimizer step",
    what: "modelStates, bf16 weights, gradients and AdamW states",
    rule: "states",
    unit: "GiB",
    measured: 24.27,
    predicted: () => train("meta-llama/Llama-3.2-3B", {}, single(1)).breakdownGiB.modelStates,
  },
  {
    id: "bert-base inference fp32, 8×128 → 8×512",
    source:
      "transformers docs/source/en/benchmarks.md @18dcde0d: PyTorchBenchmark, bert-base-uncased, bs 8, TITAN RTX, " +
      "fp32, eager, NVML device memory 1307 → 1539 MB",
    what: "growth of the forward working set with the sequence",
    rule: "slope",
    unit: "MiB",
    measured: 1539 - 1307,
    predicted: () => {
      const m = encoder(12, 0.1);
      const at = (s: number) =>
        estimateEncoderInference({
          model: m,
          batchSize: 8,
          sequenceLength: s,
          attention: "eager",
          usableGiB: 24,
          bytesPerElement: 4,
        }).allocatedPeakGiB;
      return ((at(512) - at(128)) * GIB) / 2 ** 20;
    },
  },
  // vLLM's profiling pass: max_model_len tokens without chunked prefill (20k), max_num_batched_tokens with it (35k:
  // v0.6 chunks above 32K at 512 tokens, "Chunked prefill is enabled with max_num_batched_tokens=512", #10537).
  ...(
    [
      ["20000, no chunked prefill", 20000, 17.06],
      ["35000, chunked prefill at 512 tokens", 512, 15.05],
    ] as const
  ).map(([label, profiled, gib]) => ({
    id: `vLLM Llama-3.1-8B profile peak, max_model_len ${label}`,
    source:
      'vllm-project/vllm#10517 (comment of 2024-12-02, RTX 3090): "Memory profiling results: ' +
      `total_gpu_memory=23.58GiB ... peak_torch_memory=${gib.toFixed(2)}GiB"`,
    what: `weights + activations of a ${profiled}-token profiling pass`,
    rule: "peak" as const,
    unit: "GiB" as const,
    measured: gib,
    predicted: () => {
      const e = serving(profiled);
      return e.breakdownGiB.weights + e.breakdownGiB.activations;
    },
  })),
  ...(
    [
      ["ZeRO-3, no offload", 3, "none", 6.1],
      ["ZeRO-3, optimizer offload", 3, "optimizer", 0.79],
      ["ZeRO-3, optimizer and parameter offload", 3, "optimizer-and-parameters", 0.12],
    ] as const
  ).map(([label, zeroStage, offload, gib]) => ({
    id: `t5-3b ${label}, 8 GPUs`,
    source:
      "DeepSpeed docs/code-docs/source/memory.rst @edaa7221: estimate_zero3_model_states_mem_needs_all_live, t5-3b, " +
      "1 node × 8 GPUs",
    what: "modelStates (per GPU)",
    rule: "estimator" as const,
    unit: "GiB" as const,
    measured: gib,
    predicted: () =>
      train(
        "google-t5/t5-3b",
        { gpus: 8, gpusPerNode: 8, precision: "bf16-mixed", strategy: "deepspeed" },
        single(1, { zeroStage, offload }),
      ).breakdownGiB.modelStates,
  })),
];

/** Every published case, in the order of the docs table. */
export const PUBLISHED_CASES: readonly PublishedCase[] = [
  ...peakCases,
  ...attentionCases,
  ...otherCases,
  ...TRAINING_V3_CASES,
  ...SERVING_V019_CASES,
  ...FSDP_QLORA_CASES,
  ...SCALE_CASES,
  ...FMS_QLORA_CASES,
  ...BLOOM_CASES,
  ...FALCON_CASES,
];

/** The tolerance each rule allows: [lowest, highest] ratio of predicted to measured. */
export const TOLERANCE: { readonly [R in Rule]: readonly [number, number] } = {
  peak: [0.95, 1.15],
  reserved: [0.85, 1.1],
  gap: [0.95, 1.15],
  states: [0.95, 1.05],
  slope: [0.95, 1.15],
  estimator: [0.99, 1.01],
  "lower-bound": [0.95, Infinity],
  capacity: [0.95, 1.02],
};

/** The docs table: case, source, measured, predicted, ratio. */
export function publishedTable(): string {
  const rows = PUBLISHED_CASES.map((c) => {
    const p = c.predicted();
    const cells = [c.id, c.rule, `${c.measured} ${c.unit}`, `${p.toFixed(2)} ${c.unit}`, (p / c.measured).toFixed(2)];
    return `| ${cells.join(" | ")} | ${c.source}; ${c.what} |`;
  });
  return [
    "| Case | Rule | Measured | Predicted | Ratio | Source and settings |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ].join("\n");
}
