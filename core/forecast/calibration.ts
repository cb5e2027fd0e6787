/**
 * The forecast's constants: what share of a GPU's peak each kind of kernel reaches, and the fixed costs around them.
 * Those marked "Fitted" are fitted to the published runs of test/core/forecast/published-runs.ts (the table in
 * docs/forecast.md, with sources) and to nothing else; the test holds every run within ±25%. Those marked "Assumed"
 * no published run here measures: they are engineering estimates, named as such in docs/forecast.md.
 */
import type { ModelArchitecture } from "../models/types";
import type { Transport } from "./types";

/**
 * Fitted: share of dense BF16 peak a training micro-batch's matrix products reach with many tokens (Hugging Face
 * Transformers or an eager PyTorch model, SDPA or FlashAttention).
 */
export const TRAINING_MFU_MAX = 0.6;
/** Fitted: tokens per micro-batch at which the products reach half of {@link TRAINING_MFU_MAX}. */
export const TRAINING_HALF_TOKENS = 256;
/**
 * Assumed: hidden size below which products are too thin to fill the tensor cores; the share scales with
 * `hiddenSize / THIN_HIDDEN_SIZE` below it (every calibrated run is at 2048 or above).
 */
export const THIN_HIDDEN_SIZE = 2048;
/** Share of peak a training micro-batch's products reach at `tokens` tokens. */
export function trainingMfu(m: ModelArchitecture, tokens: number): number {
  const thin = Math.min(1, m.hiddenSize / THIN_HIDDEN_SIZE);
  return TRAINING_MFU_MAX * (tokens / (tokens + TRAINING_HALF_TOKENS)) * thin;
}

/**
 * Fitted: hidden-sized and intermediate-sized bf16 tensors the memory-bound kernels of one layer read or write per
 * token and pass (norms, rotary, attention's inputs and output, residual adds; the MLP's activation and product).
 */
export const ACTIVATION_HIDDEN_TENSORS = 20;
export const ACTIVATION_INTERMEDIATE_TENSORS = 10;
/** Fitted: bytes per adapted feature, token and pass: the fp32 copy of the input written and read, and the output's. */
export const ADAPTER_BYTES_PER_FEATURE = 8;

/** Assumed: share of memory bandwidth a streaming kernel (an optimizer's update, a dequantization) reaches. */
export const BANDWIDTH_EFFICIENCY = 0.8;
/** Assumed: share of the backward pass (or of a micro-batch under ZeRO 3) that collectives run under. */
export const OVERLAP = 0.8;

/** Fitted (one run): share of peak an encoder's fp16 forward reaches on large batches (PyTorch, SDPA). */
export const ENCODER_MFU_MAX = 0.4;
/** Assumed: tokens per batch at which an encoder reaches half of {@link ENCODER_MFU_MAX}. */
export const ENCODER_HALF_TOKENS = 2048;
/** Assumed: launch and host overhead per layer and batch of an encoder's forward. */
export const ENCODER_BATCH_OVERHEAD_SECONDS_PER_LAYER = 0.0004;

/** Share of peak an encoder batch of `tokens` tokens reaches. */
export function encoderMfu(m: ModelArchitecture, tokens: number): number {
  const thin = Math.min(1, m.hiddenSize / 1024);
  return ENCODER_MFU_MAX * (tokens / (tokens + ENCODER_HALF_TOKENS)) * thin;
}

/** Assumed: tokens per second one CPU turns text into ids with a Hugging Face fast tokenizer, batched. */
export const TOKENIZER_TOKENS_PER_CPU_SECOND = 200_000;

/** Fitted: share of peak vLLM's prefill reaches. */
export const PREFILL_MFU = 0.5;
/** Assumed: share of peak a decode step reaches once the batch makes it compute-bound (no calibrated run is). */
export const DECODE_MFU = 0.5;
/** Fitted: share of memory bandwidth a decode step reaches streaming weights and KV cache. */
export const DECODE_BANDWIDTH_EFFICIENCY = 0.8;
/** Fitted: the engine's own time per decode step (scheduling, sampling, launching its graph): what small models show. */
export const DECODE_STEP_OVERHEAD_SECONDS = 0.003;
/**
 * Fitted on A100s with NVLink: tensor parallelism's two all-reduces per layer and decode step, latency rather than
 * bandwidth. Over a g5's or g6's PCIe they may take longer; no published run there gives the settings.
 */
export const TENSOR_PARALLEL_SECONDS_PER_LAYER = 0.00006;

/**
 * Assumed: bandwidth a collective gets within a g5/g6/g6e node, GB/s: GPUs reach each other over PCIe Gen4 through the
 * host (no NVLink), about half of a x16 link's 32 GB/s once NCCL's protocol is paid.
 */
export const PCIE_COLLECTIVE_GBPS = 12;
/** What NCCL reaches of a node's baseline network bandwidth between nodes, by transport, and its name in the plan. */
export const NETWORK_EFFICIENCY: {
  readonly [T in Transport]: { readonly share: number; readonly text: string };
} = {
  /** Assumed: NCCL's socket transport through the kernel's TCP stack, 16 sockets per peer. */
  tcp: { share: 0.7, text: "TCP over ENA" },
  /**
   * Assumed: libfabric's EFA provider (SRD, kernel bypass) through aws-ofi-nccl, staged through host memory on g5; the
   * one public 2-node figure for EFA without GPUDirect (p3dn, NVIDIA/nccl#235).
   */
  efa: { share: 0.9, text: "EFA" },
};

/** Assumed: Ray workers starting, the runtime reading its tuning and the job's first step: before any work. */
export const RAY_START_SECONDS = 60;
/** Assumed: share of the node's network a model download from S3 or the Hugging Face Hub gets. */
export const DOWNLOAD_NETWORK_SHARE = 0.5;
