/**
 * What the attention implementation and dropout add to memory, beyond the fused (SDPA/flash), dropout-free layer
 * that ./activations.ts measures.
 *
 * Training, per layer, from the saved tensors of transformers 5.18's `eager_attention_forward`
 * (calibration/measure_attention.py → test/data/attention-calibration.json, checked in
 * test/core/memory/attention.test.ts):
 * - eager keeps the softmax output for every score (batch × heads × seq²): 2 bytes in 16 bit, or 4 + 2 when the
 *   softmax runs in fp32 and is cast back (Llama-style); with attention dropout it keeps the dropout mask and the
 *   dropped probabilities instead of the cast copy. On a GPU the mask is a 1-byte bool (`native_dropout`); PyTorch's
 *   CPU path keeps a noise tensor of the activation dtype instead, which the calibration accounts for.
 *   BERT at dropout 0.1 in fp16: 2 + 1 + 2 = 5 bytes per score, which reproduces the measured eager − SDPA gap of
 *   transformers' BERT, DistilBERT and ALBERT SDPA benchmarks (test/core/memory/published.test.ts).
 * - Llama-style eager also keeps the attention output before the output projection (2·q bytes per token, measured).
 * - SDPA and flash apply attention dropout inside the kernel (only the RNG state is kept), so they add nothing.
 * - Except where transformers hands SDPA one key/value head unexpanded (Falcon-7B): PyTorch then runs its math kernel,
 *   on a GPU as on the CPU, which keeps fp32 copies of query, key and value and the fp32 probabilities (4 bytes per
 *   score); eager there keeps key and value broadcast to the query's width from two sequences on (measured).
 * - And where transformers hands a fused SDPA a materialised causal mask (Falcon's new decoder): the kernel saves a copy
 *   of it in the query's dtype every layer, 2 bytes per sequence² in 16 bit (measured).
 * - While one layer runs, eager (and SDPA's math kernel) also holds its softmax's gradients (or BLOOM's pre-softmax
 *   scores) beyond what it saves: counted once per step ({@link scoreTransientBytesPerToken}), from the peak of a step's
 *   live tensors on CPU.
 * - Hidden dropout (BERT-style encoders: after the attention output and after the MLP) keeps two masks of the
 *   hidden size per token, whatever the attention implementation.
 * Inference keeps nothing, but eager materialises one layer's scores (batch × heads × seq² elements): 1.0–1.17
 * tensors' worth measured on CPU, planned at 1.5, which transformers' BERT inference benchmark (fp32, TITAN RTX)
 * bounds from above; MPNet and T5 add a relative position bias of the same shape in the activation dtype.
 */
import type { AttentionImplementation, AttentionTraits, GptBlock, ModelArchitecture } from "../models/types";

/** Traits by architecture type when a catalog entry does not set its own. */
const DEFAULT_TRAITS: { readonly [T in ModelArchitecture["type"]]: AttentionTraits } = {
  "decoder-llm": {
    implementations: ["sdpa", "eager", "flash"],
    attentionDropout: 0,
    hiddenDropout: 0,
    softmaxInFp32: true,
    relativePositionBias: false,
  },
  "vision-language": {
    implementations: ["sdpa", "eager", "flash"],
    attentionDropout: 0,
    hiddenDropout: 0,
    softmaxInFp32: true,
    relativePositionBias: false,
  },
  // BERT, RoBERTa, XLM-R: attention_probs_dropout_prob and hidden_dropout_prob default to 0.1.
  "encoder-embedding": {
    implementations: ["sdpa", "eager"],
    attentionDropout: 0.1,
    hiddenDropout: 0.1,
    softmaxInFp32: false,
    relativePositionBias: false,
  },
  // T5: dropout_rate 0.1 on the attention weights and hidden states, relative position bias.
  "encoder-decoder": {
    implementations: ["sdpa", "eager"],
    attentionDropout: 0.1,
    hiddenDropout: 0.1,
    softmaxInFp32: false,
    relativePositionBias: true,
  },
};

/**
 * Traits a GPT-style layout brings whatever the entry says: BLOOM writes its attention out in eager ops (ALiBi added by
 * `baddbmm`, `softmax(dtype=float32)` cast back) and supports nothing else (transformers 5.18 `modeling_bloom.py`);
 * its configs keep `attention_dropout` and `hidden_dropout` at 0. Falcon's softmax runs in the activations' dtype, its
 * blocks return their eager probabilities, Falcon-7B's one key/value head reaches the attention unexpanded, and the new
 * decoder's SDPA is handed the causal mask the model always builds (`modeling_falcon.py`). The others follow their type.
 */
const GPT_BLOCK_TRAITS: { readonly [B in GptBlock]: AttentionTraits | undefined } = {
  gpt2: undefined,
  "gpt-neox": undefined,
  phi: undefined,
  bloom: {
    implementations: ["eager"],
    attentionDropout: 0,
    hiddenDropout: 0,
    softmaxInFp32: true,
    relativePositionBias: false,
  },
  // Flash is left out: FalconFlashAttention2 needs the flash-attn package, which no CPU runs, so it is not measured.
  falcon: {
    implementations: ["sdpa", "eager"],
    attentionDropout: 0,
    hiddenDropout: 0,
    softmaxInFp32: false,
    relativePositionBias: false,
    unexpandedKeyValue: true,
    blockReturnsProbabilities: true,
  },
  // Key and value reach the attention broadcast to the query's heads, so SDPA runs fused, handed the causal mask.
  "falcon-new-decoder": {
    implementations: ["sdpa", "eager"],
    attentionDropout: 0,
    hiddenDropout: 0,
    softmaxInFp32: false,
    relativePositionBias: false,
    blockReturnsProbabilities: true,
    materialisedMask: true,
  },
};

/** The attention traits of a model: its catalog entry's, else its GPT-style layout's, else its type's. */
export function attentionTraits(m: Pick<ModelArchitecture, "type" | "attention" | "gptBlock">): AttentionTraits {
  return m.attention ?? (m.gptBlock && GPT_BLOCK_TRAITS[m.gptBlock]) ?? DEFAULT_TRAITS[m.type];
}

/**
 * The implementation planned when the workload pins none (the runtime hands it to transformers): SDPA where transformers
 * runs it as a fused kernel, as transformers itself would pick; else eager where the model has it (it multiplies in 16
 * bit where SDPA's math kernel, Falcon-7B's, multiplies in fp32). A training plan chooses between those two per step
 * instead, by memory (./knob-search.ts `searchKnobs`): under autocast the math kernel keeps less.
 */
export function defaultAttention(
  m: Pick<ModelArchitecture, "type" | "attention" | "gptBlock">,
): AttentionImplementation {
  const t = attentionTraits(m);
  if (t.implementations.includes("sdpa") && scoreKernel(t, "sdpa") === "fused") return "sdpa";
  return t.implementations.includes("eager") ? "eager" : t.implementations[0]!;
}

/** Where the step runs: a GPU keeps 1-byte dropout masks, PyTorch's CPU dropout a noise tensor of the dtype. */
export type DropoutDevice = "gpu" | "cpu";

/**
 * Bytes saved per attention score (batch × heads × seq² elements) by eager attention in training. An fp32 softmax keeps
 * its 4-byte output and the next matmul a 16-bit copy: a Llama-style softmax casts back to the query's dtype before
 * dropout (fp32 where the stream is: rotary embeddings multiply the query by the stream's fp32 cos and sin), while
 * under CUDA's autocast a softmax without a dtype runs in fp32 (its fp32 list) and dropout masks the fp32 probabilities
 * (PyTorch's CPU noise tensor takes the dropped tensor's dtype; a GPU mask is 1 byte).
 */
export function eagerBytesPerScore(t: AttentionTraits, step: ScoreStep): number {
  const { bytesPerActivation, device = "gpu" } = step;
  const softmax = softmaxBytes(t, step);
  const mask = device === "gpu" ? 1 : droppedBytes(t, step);
  if (t.attentionDropout > 0) return softmax + mask + bytesPerActivation;
  return softmax + (fp32Softmax(t, step) ? bytesPerActivation : 0);
}

/** Whether the softmax runs in fp32: a Llama-style `softmax(dtype=float32)`, or any softmax under CUDA's autocast. */
const fp32Softmax = (t: AttentionTraits, step: ScoreStep): boolean => t.softmaxInFp32 || (step.cudaAutocast ?? false);

/** Bytes per element of the softmax's output. */
const softmaxBytes = (t: AttentionTraits, step: ScoreStep): number =>
  fp32Softmax(t, step) ? 4 : step.bytesPerActivation;

/** Bytes per element of the probabilities dropout takes: a Llama-style cast-back's (the query's), else the softmax's. */
function droppedBytes(t: AttentionTraits, step: ScoreStep): number {
  if (t.softmaxInFp32) return step.fp32Stream ? 4 : step.bytesPerActivation;
  return softmaxBytes(t, step);
}

/** The dtypes one step's scores see: bytes per activation, where dropout runs, autocast, the stream's dtype. */
export interface ScoreStep {
  readonly bytesPerActivation: number;
  /** Where dropout masks are made (their size differs). @default "gpu" */
  readonly device?: DropoutDevice;
  /** Training under CUDA's autocast (mixed precision on plain DDP, ./autocast.ts). @default false */
  readonly cudaAutocast?: boolean;
  /** The residual stream, and so a rotary query, is fp32 (./autocast.ts `fp32Stream`). @default false */
  readonly fp32Stream?: boolean;
}

/** The activations an attention estimate is for: tokens per sequence, the step's dtypes, sequences (inference). */
export interface AttentionInput extends ScoreStep {
  readonly seq: number;
  /** Sequences per training micro-batch (an unexpanded key/value head is copied from two on). @default 1 */
  readonly microBatchSize?: number;
  /** Training with full recomputation (one layer's activations at a time). @default false */
  readonly checkpointing?: boolean;
  /** LoRA's frozen base: a frozen output projection keeps no input. @default false */
  readonly frozenBase?: boolean;
  /** Sequences in the batch (inference only). @default 1 */
  readonly batch?: number;
}

/** Training: bytes per token per layer that the attention implementation and dropout add. */
export function attentionTrainingBytesPerToken(
  m: ModelArchitecture,
  impl: AttentionImplementation,
  input: AttentionInput,
): number {
  const { seq, bytesPerActivation, device = "gpu" } = input;
  const t = attentionTraits(m);
  const maskBytes = device === "gpu" ? 1 : bytesPerActivation;
  const hiddenDropout = t.hiddenDropout > 0 ? 2 * m.hiddenSize * maskBytes : 0;
  const kernel = scoreKernel(t, impl);
  if (kernel === "math") return hiddenDropout + mathKernelBytesPerToken(m, input);
  if (kernel === "fused") return hiddenDropout + (t.materialisedMask ? maskedFusedBytesPerToken(m, input) : 0);
  // Llama-style eager also keeps its attention output before the output projection (measured; not in BERT or Gemma).
  const output = t.softmaxInFp32 ? bytesPerActivation * m.attentionHeads * m.headDim : 0;
  const broadcast = t.unexpandedKeyValue ? broadcastKeyValueBytes(m, input, bytesPerActivation) : 0;
  return hiddenDropout + output + broadcast + m.attentionHeads * seq * eagerBytesPerScore(t, input);
}

/** How an implementation computes the scores: eager ops, PyTorch's math kernel (fp32, every score kept), or fused. */
export type ScoreKernel = "eager" | "math" | "fused";

/** The kernel behind `impl` for a model: SDPA is PyTorch's math kernel where key and value arrive unexpanded. */
export function scoreKernel(t: AttentionTraits, impl: AttentionImplementation): ScoreKernel {
  if (impl === "eager") return "eager";
  return impl === "sdpa" && t.unexpandedKeyValue ? "math" : "fused";
}

/** PyTorch pads a mask's last dimension for CUDA's memory-efficient kernel; planned as a multiple of 16 elements. */
const MASK_ALIGNMENT = 16;

/**
 * A fused SDPA handed a materialised mask (Falcon's new decoder), beyond the table (what eager keeps beside its scores):
 * the mask converted to the query's dtype (`convert_boolean_attn_mask`), which the kernel saves for its backward, one
 * per layer (CUDA's memory-efficient kernel, as flash takes no mask; CPU's flash kernel where measured), shared by the
 * heads and padded on a GPU to the kernel's alignment; the kernel's fp32 log-sum-exp per head; and its output, which
 * in full training is the tensor `dense` keeps anyway but over a frozen base is kept by the kernel alone. Measured.
 */
function maskedFusedBytesPerToken(m: ModelArchitecture, input: AttentionInput): number {
  const paddedSeq = Math.ceil(input.seq / MASK_ALIGNMENT) * MASK_ALIGNMENT;
  const output = input.frozenBase ? input.bytesPerActivation * m.attentionHeads * m.headDim : 0;
  return input.bytesPerActivation * paddedSeq + 4 * m.attentionHeads + output;
}

/** Bytes per element SDPA's math kernel keeps: it upcasts 16-bit query, key and value to fp32 (PyTorch's default). */
const MATH_KERNEL_BYTES = 4;

/**
 * SDPA's math kernel over an unexpanded key/value head (Falcon-7B), beyond the fused kernel's table: fp32 copies of the
 * query, of key and value as its matmuls save them, and the fp32 probabilities (4 bytes per score), less the 16-bit
 * query, key and value the table counts. Measured on CPU, whose dispatch refuses the fused kernels on unequal heads as
 * CUDA's does (`check_batch_size_and_num_heads_dense`).
 */
function mathKernelBytesPerToken(m: ModelArchitecture, input: AttentionInput): number {
  const scores = m.attentionHeads * input.seq * MATH_KERNEL_BYTES;
  return scores + broadcastKeyValueBytes(m, input, MATH_KERNEL_BYTES);
}

/**
 * What an attention's query, key and value saves keep beyond the table's fused 16-bit ones, where key and value
 * arrive as one head: `bytes` per element of the query and of key and value as the matmuls save them (the query's
 * width from two sequences on, where `matmul` expands and copies them; their own width in a batch of one).
 */
function broadcastKeyValueBytes(m: ModelArchitecture, input: AttentionInput, bytes: number): number {
  const q = m.attentionHeads * m.headDim;
  const kv = m.kvHeads * m.headDim;
  const saved = (input.microBatchSize ?? 1) > 1 ? q : kv;
  return bytes * (q + 2 * saved) - input.bytesPerActivation * (q + 2 * kv);
}

/**
 * Training: bytes per token one layer's eager attention holds at once beyond what it saves, counted once per step (one
 * layer runs at a time). At its softmax's backward a layer holds the saved output, the gradient of the probabilities
 * and the input gradient, three tensors of the softmax's dtype, where the step saved {@link eagerBytesPerScore} for it
 * (its dropout mask and copies are freed by then): Llama-style 12 − 6 = 6 bytes per score in 16 bit, BERT 6 − 2 = 4
 * without dropout and 6 − 5 = 1 with it. BLOOM's forward holds as much (its 16-bit scores, their masked sum and the
 * fp32 copy the softmax casts beside its output). Under autocast, dropout of fp32 probabilities returns an fp32 tensor
 * the layer keeps until it returns (its attention weights) while the next matmul saves a 16-bit copy: 4 bytes per
 * score, where that is more. SDPA's math kernel (Falcon-7B) holds three fp32 tensors where it saved one: 8 bytes per
 * score. A block that returns its probabilities (Falcon's eager) keeps the previous layer's alive while the next runs;
 * saved anyway without checkpointing, under checkpointing they add one tensor of the softmax's dtype. Measured on CPU as
 * the peak of live tensors of a step (calibration/test_eager_peak.py).
 */
export function scoreTransientBytesPerToken(
  m: ModelArchitecture,
  impl: AttentionImplementation,
  input: AttentionInput,
): number {
  const t = attentionTraits(m);
  const kernel = scoreKernel(t, impl);
  if (kernel === "fused") return 0;
  if (kernel === "math") return m.attentionHeads * input.seq * 2 * MATH_KERNEL_BYTES;
  const backward = 3 * softmaxBytes(t, input) - eagerBytesPerScore(t, input);
  const dropped = droppedBytes(t, input);
  const forward = t.attentionDropout > 0 && dropped > input.bytesPerActivation ? dropped : 0;
  const previous = t.blockReturnsProbabilities && input.checkpointing ? softmaxBytes(t, input) : 0;
  return m.attentionHeads * input.seq * (Math.max(0, backward, forward) + previous);
}

/** Score-sized tensors alive at once in an eager no-grad attention (see the module comment). */
export const EAGER_INFERENCE_SCORE_TENSORS = 1.5;

/** Inference: transient bytes of one layer's attention for a batch (eager scores, position bias, padding mask). */
export function attentionInferenceBytes(
  m: ModelArchitecture,
  impl: AttentionImplementation,
  { seq, bytesPerActivation, batch = 1 }: AttentionInput,
): number {
  const t = attentionTraits(m);
  const scores = batch * m.attentionHeads * seq * seq;
  const paddingMask = batch * seq * seq * bytesPerActivation;
  if (impl !== "eager") return paddingMask;
  const bias = t.relativePositionBias ? bytesPerActivation : 0;
  return paddingMask + scores * (EAGER_INFERENCE_SCORE_TENSORS * bytesPerActivation + bias);
}
