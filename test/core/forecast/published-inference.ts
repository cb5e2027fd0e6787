/** The forecast's vLLM and embedding runs: published throughputs whose request lengths and batches are known. */
import type { ModelArchitecture } from "../../../core/models/types";
import { encoderRowsPerSecond, engineTime } from "../../../core/forecast/inference";
import { concurrentSequences } from "../../../core/forecast/kinds";
import { estimateLlmServing, VLLM_LLM_CLASS_MAX_BATCHED_TOKENS } from "../../../core/memory/estimate-inference";
import { MAX_NUM_SEQS } from "../../../core/memory/plan-inference";
import { GPUS, model, type GpuName, type PublishedRun } from "./published-common";

/** One vLLM engine's output tokens per second over `requests` requests of the given lengths. */
function vllmOutputTokensPerSecond(run: {
  readonly model: ModelArchitecture;
  readonly gpu: GpuName;
  readonly tensorParallelSize: number;
  readonly requests: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** Sequences at once: the client's concurrency, else what the KV cache holds (at most `max_num_seqs`). */
  readonly concurrency?: number;
  /** A vLLM before the V1 engine (0.8), which ran prefills as steps of their own. */
  readonly v0Engine?: boolean;
}): number {
  const g = GPUS[run.gpu];
  const serving = estimateLlmServing({
    model: run.model,
    tensorParallel: run.tensorParallelSize,
    gpuMemoryUtilization: 0.9,
    maxBatchedTokens: VLLM_LLM_CLASS_MAX_BATCHED_TOKENS,
    samplerSequences: MAX_NUM_SEQS,
    usableGiB: g.cudaTotalGiB,
  });
  const held = concurrentSequences(serving.kvCacheTokens, run.promptTokens, run.outputTokens);
  const t = engineTime({
    ...run,
    concurrentSequences: Math.min(held, run.concurrency ?? MAX_NUM_SEQS),
    kvCacheBytesPerToken: serving.kvCacheBytesPerToken * run.tensorParallelSize,
    weightBytes: 2,
    gpu: g,
    prefillInDecodeSteps: !run.v0Engine,
  });
  return (run.requests * run.outputTokens) / t.seconds;
}

const QWEN25 = "QwenLM/Qwen2.5@a912d239 docs/source/benchmark/speed_benchmark.rst (vLLM 0.6.3, A100 80GB, BF16)";
/** Qwen2.5's speed benchmark: one request, 2,048 tokens generated after `prompt` tokens. */
const qwen25Case = (size: string, prompt: number, tp: number, measured: number): PublishedRun => ({
  id: `qwen2.5-${size.toLowerCase()}-batch1-in${prompt}-tp${tp}`,
  source: QWEN25,
  gpu: "A100-SXM4-80GB",
  gpus: tp,
  setting: `Qwen2.5-${size}-Instruct, one request, ${prompt} prompt + 2,048 new tokens, tensor parallel ${tp}`,
  unit: "output tokens/s",
  measured,
  predicted: () =>
    vllmOutputTokensPerSecond({
      model: model(`Qwen/Qwen2.5-${size}`),
      gpu: "A100-SXM4-80GB",
      tensorParallelSize: tp,
      requests: 1,
      promptTokens: prompt,
      outputTokens: 2048,
    }),
});
const INFERENCE_BENCH = "ree2raz/inference-bench@3f89896e results/summary.csv (vLLM 0.8.5, --max-num-seqs 64)";
/** inference-bench's short regime: ~200 prompt tokens, at most 128 new; `c` requests at once. */
const l4Case = (c: number, measured: number): PublishedRun => ({
  id: `inference-bench-l4-qwen2.5-7b-short-c${c}`,
  source: INFERENCE_BENCH,
  gpu: "L4",
  gpus: 1,
  setting: `Qwen2.5-7B-Instruct fp16, ${c} concurrent requests of ~200 prompt + 128 new tokens (greedy, at most)`,
  unit: "output tokens/s",
  measured,
  predicted: () =>
    vllmOutputTokensPerSecond({
      model: model("Qwen/Qwen2.5-7B"),
      gpu: "L4",
      tensorParallelSize: 1,
      requests: 10_000,
      promptTokens: 200,
      outputTokens: 128,
      concurrency: c,
    }),
});

export const VLLM_RUNS: readonly PublishedRun[] = [
  {
    id: "llm-compressor-a10g-llama-3-8b-offline",
    source: "vllm-project/llm-compressor@eafb1ed7 examples/benchmarking/offline_batch/README.md (vLLM 0.5.1)",
    gpu: "A10G",
    gpus: 1,
    setting: "Meta-Llama-3-8B fp16, LLM.generate over 1,000 requests of 545 prompt + 225 new tokens on average",
    unit: "output tokens/s",
    measured: 488,
    predicted: () =>
      vllmOutputTokensPerSecond({
        model: model("meta-llama/Llama-3.1-8B"),
        gpu: "A10G",
        tensorParallelSize: 1,
        requests: 1000,
        promptTokens: 545,
        outputTokens: 225,
        v0Engine: true,
      }),
  },
  {
    id: "nm-vllm-a10g-llama-2-7b-256-128",
    source: "neuralmagic/nm-vllm commit c13b5c2d, nightly benchmark_throughput comment (NVIDIA A10G x 1)",
    gpu: "A10G",
    gpus: 1,
    setting: "Llama-2-7b fp16, benchmark_throughput: 1,000 prompts of 256 tokens, 128 new: 3.80 requests/s",
    unit: "output tokens/s",
    measured: Math.round(3.8028 * 128),
    predicted: () =>
      vllmOutputTokensPerSecond({
        model: model("meta-llama/Llama-2-7b-hf"),
        gpu: "A10G",
        tensorParallelSize: 1,
        requests: 1000,
        promptTokens: 256,
        outputTokens: 128,
        v0Engine: true,
      }),
  },
  qwen25Case("0.5B", 1, 1, 311.55),
  qwen25Case("1.5B", 1, 1, 183.33),
  qwen25Case("1.5B", 6144, 1, 176.68),
  qwen25Case("7B", 1, 1, 84.28),
  qwen25Case("7B", 30720, 1, 70.33),
  qwen25Case("14B", 1, 1, 46.3),
  qwen25Case("32B", 1, 1, 22.13),
  qwen25Case("32B", 30720, 2, 31.82),
  qwen25Case("72B", 1, 2, 18.19),
  qwen25Case("72B", 1, 4, 31.37),
  l4Case(64, 831.3),
  l4Case(1, 17.11),
  {
    id: "musgrave-a100-40gb-llama-3.1-8b-c1",
    source: "johnmusgrave.com/p/vllm-throughput-latency-sweep-on (vLLM 0.23.0): 'about 75 tokens/sec'",
    gpu: "A100-SXM4-40GB",
    gpus: 1,
    setting: "Llama-3.1-8B-Instruct bf16, one request at a time, 1,024 prompt + 128 new tokens",
    unit: "output tokens/s",
    measured: 75,
    predicted: () =>
      vllmOutputTokensPerSecond({
        model: model("meta-llama/Llama-3.1-8B"),
        gpu: "A100-SXM4-40GB",
        tensorParallelSize: 1,
        requests: 1,
        promptTokens: 1024,
        outputTokens: 128,
      }),
  },
];

export const EMBEDDING_RUNS: readonly PublishedRun[] = [
  {
    id: "infinity-l4-bge-large-torch-fp16",
    source: "michaelfeil/infinity@fcb951cb docs/docs/benchmarking.md, 'NVIDIA L4' table, infinity (torch)",
    gpu: "L4",
    gpus: 1,
    setting: "bge-large-en-v1.5 fp16, PyTorch, requests of 256 texts / 115,000 tokens (449 per text), batch 32",
    unit: "texts/s",
    measured: 130.9,
    predicted: () =>
      encoderRowsPerSecond({
        model: model("BAAI/bge-large-en-v1.5"),
        sequenceTokens: 449,
        batchSize: 32,
        gpu: GPUS.L4,
      }),
  },
];
