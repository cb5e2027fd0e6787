/**
 * Published cases added with the planner's third version, from sources the earlier tables did not use: the
 * fms-acceleration benchmark references (HF Trainer on an A100 80GB: non-fused AdamW, LoRA with dropout), a GPT-NeoX
 * row of LitGPT's A10G config hub, and vLLM 0.19 server logs of llm-d-planner's accuracy sweep (V1 engine on an
 * H100). Each case names its source and settings; ./published-cases.ts holds the rules and the docs table.
 */
import { estimateLlmServing } from "../../../core/memory/estimate-inference";
import { catalogModel } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";
import { GIB, single, train, type PlannedRun, type PublishedCase } from "./published-helpers";

const FMS =
  "foundation-model-stack/fms-acceleration scripts/benchmarks/refs/a100_80gb.csv @24bdadb2: HF Trainer " +
  "(transformers 4.48.1, torch 2.4.1), A100 80GB, torch_dtype bfloat16 (pure bf16), default optim adamw_torch " +
  "(foreach), gradient checkpointing, flash_attention_2, 4096 tokens packed, mem_peak_torch_mem_alloc_in_bytes";

/** Mistral-7B under HF Trainer's defaults: foreach AdamW, checkpointing, FlashAttention-2, 4096 packed tokens. */
const mistral = (microBatch: number, lora?: { rank: number; dropout: number }) =>
  train(
    "mistralai/Mistral-7B-v0.1",
    {
      sequenceLength: 4096,
      attention: "flash",
      optimizerStep: "foreach",
      ...(lora && {
        lora: { ...lora, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj"], quantization: "none" as const },
      }),
    },
    single(microBatch, { gradientCheckpointing: true }),
  );

/** stabilityai/stablelm-base-alpha-3b (config.json: GPTNeoXForCausalLM, use_parallel_residual, hidden_act gelu). */
const STABLELM_ALPHA_3B: ModelArchitecture = {
  family: "gpt-neox",
  type: "decoder-llm",
  parameters: 3_637_321_728,
  largestLayerParameters: 207_618_048,
  layers: 16,
  hiddenSize: 4096,
  attentionHeads: 32,
  kvHeads: 32,
  headDim: 128,
  intermediateSize: 16384,
  mlp: "gelu",
  gptBlock: "gpt-neox",
  vocabSize: 50688,
  tiedEmbeddings: false,
  source: "huggingface.co/stabilityai/stablelm-base-alpha-3b config.json",
};

export const TRAINING_V3_CASES: readonly PublishedCase[] = [
  ...([4, 8] as const).map((mb) => ({
    id: `Mistral-7B full FT, foreach AdamW, ${mb}×4096`,
    source: `${FMS}: full-finetuning, batch ${mb}, "${mb === 4 ? "72434837504" : "72435230720"}" bytes`,
    what: "optimizerStep foreach: one parameter-sized bf16 temporary in the step (fused would plan 0.80 of it)",
    rule: "peak" as const,
    unit: "GB" as const,
    measured: mb === 4 ? 72.434837504 : 72.43523072,
    predicted: () => (mistral(mb).allocatedPeakGiB * GIB) / 1e9,
  })),
  ...([4, 8] as const).map((mb) => ({
    id: `Mistral-7B LoRA r16 q/k/v/o dropout 0.1, ${mb}×4096`,
    source:
      `${FMS}: peft lora r 16, alpha 16, lora_dropout 0.1, target_modules q_proj k_proj v_proj o_proj, batch ${mb}, ` +
      `"${mb === 4 ? "26704571904" : "38742912512"}" bytes`,
    what: "fp32 adapters: each adapted layer's cast input and dropout mask",
    rule: "peak" as const,
    unit: "GB" as const,
    measured: mb === 4 ? 26.704571904 : 38.742912512,
    predicted: () => (mistral(mb, { rank: 16, dropout: 0.1 }).allocatedPeakGiB * GIB) / 1e9,
  })),
  {
    id: "stablelm-base-alpha-3b LoRA r32 1×512 (A10G)",
    source:
      "LitGPT config_hub/finetune/README.md @03ffc5515b25 and stablelm-base-alpha-3b/lora.yaml: r 32, query+value " +
      "(one fused qkv layer), lora_dropout 0.05, bf16-true, Alpaca2k (512), 1×A10G, max_memory_allocated / 1e9",
    what: "gptBlock gpt-neox: parallel attention and MLP, fused GELU",
    rule: "peak",
    unit: "GB",
    measured: 8.58,
    predicted: () => {
      const lora = { rank: 32, targetModules: ["query_key_value"], quantization: "none" as const, dropout: 0.05 };
      const e = train(STABLELM_ALPHA_3B, { usableGiB: 21.99, sequenceLength: 512, lora }, single(1));
      return (e.allocatedPeakGiB * GIB) / 1e9;
    },
  },
];

/** vLLM 0.19 on an H100 (total_memory=79.19GiB), gpu_memory_utilization 0.95, max_num_seqs 1024, 8192 batched tokens. */
const LLMD =
  "llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs @d3121e05, vLLM 0.19.0 (V1), H100 80GB, " +
  "gpu_memory_utilization 0.95, max_model_len 8192, max_num_batched_tokens 8192, max_num_seqs 1024";

/** [catalog id, tensor parallel size, logged torch peak increase GiB, logged KV cache tokens, log file stem] */
const V019_LOGS = [
  ["meta-llama/Llama-3.1-8B-Instruct", 1, 1.89, 476016, "meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192"],
  ["meta-llama/Llama-3.1-8B-Instruct", 2, 1.89, 1044688, "meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192"],
  ["meta-llama/Llama-3.1-8B-Instruct", 4, 1.89, 2209792, "meta-llama-llama-3-1-8b---h100-80gb--tp4pp1dp1--8192"],
  ["Qwen/Qwen2.5-7B-Instruct", 1, 2.21, 1096000, "qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--8192"],
  ["Qwen/Qwen2.5-7B-Instruct", 2, 2.21, 2390592, "qwen-qwen2-5-7b-instruct--h100-80gb--tp2pp1dp1--8192"],
  ["Qwen/Qwen2.5-7B-Instruct", 4, 2.21, 5043280, "qwen-qwen2-5-7b-instruct--h100-80gb--tp4pp1dp1--8192"],
  ["Qwen/Qwen2.5-72B-Instruct", 2, 2.29, 19920, "qwen-qwen2-5-72b-instruc--h100-80gb--tp2pp1dp1--8192"],
  ["google/gemma-7b", 1, 3.63, 129760, "google-gemma-7b--h100-80gb--tp1pp1dp1--8192"],
  ["google/gemma-2-9b-it", 1, 3.65, 168880, "google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192"],
] as const;

const v019 = (id: string, tp: number) =>
  estimateLlmServing({
    model: catalogModel(id)!,
    tensorParallel: tp,
    gpuMemoryUtilization: 0.95,
    maxBatchedTokens: 8192,
    samplerSequences: 1024,
    usableGiB: 79.19,
  });

export const SERVING_V019_CASES: readonly PublishedCase[] = V019_LOGS.flatMap(([id, tp, peakGiB, tokens, log]) => [
  {
    id: `vLLM 0.19 ${id.split("/")[1]} TP${tp} profile peak`,
    source: `${LLMD}: ${log}.log, "torch peak memory increase: ${peakGiB.toFixed(2)}GiB"`,
    what: "activations: the larger of the 8192-token forward and sampling 1024 requests",
    rule: "peak" as const,
    unit: "GiB" as const,
    measured: peakGiB,
    predicted: () => v019(id, tp).breakdownGiB.activations,
  },
  {
    id: `vLLM 0.19 ${id.split("/")[1]} TP${tp} KV cache`,
    source: `${LLMD}: ${log}.log, "GPU KV cache size: ${tokens.toLocaleString("en-US")} tokens"`,
    what: "tokens: 0.95 × 79.19 GiB − weights − profile peak − non-torch memory, over the KV bytes per token",
    rule: "capacity" as const,
    unit: "tokens" as const,
    measured: tokens,
    predicted: () => v019(id, tp).kvCacheTokens,
  },
]);

const LITGPT_OOM =
  'LitGPT config_hub/finetune/README.md @03ffc5515b25 ("OOM" on 1xA10G, bf16-true, Alpaca2k at 512 tokens, micro-batch 1)';
/** LitGPT's LoRA on every linear layer and the head: r 16, lora_dropout 0.1 (gemma-7b and gemma2-9b lora.yaml). */
const GEMMA_ALL = {
  rank: 16,
  targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"],
  quantization: "none" as const,
  dropout: 0.1,
};
const onA10G = { usableGiB: 21.99, sequenceLength: 512 };

/** Published runs that ran out of memory: the plan of the same settings must not fit. */
export const OOM_CASES: readonly PlannedRun[] = [
  {
    id: "gemma-7b LoRA all linear + head, 1×512, 1×A10G",
    source: LITGPT_OOM,
    plan: () => train("google/gemma-7b", { ...onA10G, lora: GEMMA_ALL }, single(1)),
  },
  {
    id: "gemma-2-9b LoRA all linear + head, 1×512, 1×A10G",
    source: LITGPT_OOM,
    plan: () => train("google/gemma-2-9b", { ...onA10G, lora: GEMMA_ALL }, single(1)),
  },
  {
    id: "Llama-3.1-8B full fine-tune, 4×512, 1×A10G",
    source: `${LITGPT_OOM}; llama-3.1-8b/full.yaml, micro-batch 4`,
    plan: () => train("meta-llama/Llama-3.1-8B", onA10G, single(4)),
  },
];
