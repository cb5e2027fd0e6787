/** What the memory planner needs to know about a model. */

/** Feed-forward type: gated (3 matrices) or plain (2 matrices). */
export type MlpKind = "swiglu" | "geglu" | "gelu" | "relu";

/** Vision tower of a vision-language model (with its projector or merger). */
export interface VisionTower {
  /** Parameters of the tower plus projector/merger. */
  readonly parameters: number;
  readonly projectorParameters: number;
  readonly layers: number;
  readonly hiddenSize: number;
  readonly attentionHeads: number;
  readonly intermediateSize: number;
  readonly patchSize: number;
  /** Qwen2-VL style: the token count follows the image size (one LLM token per 28×28 px after a 2×2 merge). */
  readonly dynamicResolution: boolean;
  /** LLM tokens per image by default (LLaVA-1.5: 576; Qwen2-VL processor default max_pixels 28·28·1280: 1280). */
  readonly defaultMaxImageTokens: number;
}

/** Attention kernels transformers can run (`attn_implementation`): eager (plain PyTorch ops), sdpa, flash (FlashAttention-2). */
export const ATTENTION_IMPLEMENTATIONS = ["eager", "sdpa", "flash"] as const;
export type AttentionImplementation = (typeof ATTENTION_IMPLEMENTATIONS)[number];

/**
 * How a model family's attention keeps memory (transformers 5.18 `modeling_*.py` and `configuration_*.py`; see
 * core/memory/attention.ts for what each trait costs).
 */
export interface AttentionTraits {
  /** Implementations the model class supports (`_supports_sdpa`, `_supports_flash_attn`); the first is not the default. */
  readonly implementations: readonly AttentionImplementation[];
  /** Dropout on the attention probabilities in training (`attention_probs_dropout_prob`, `attention_dropout`). */
  readonly attentionDropout: number;
  /** Dropout on the hidden states after attention and MLP in training (`hidden_dropout_prob`). */
  readonly hiddenDropout: number;
  /** Eager softmax runs in fp32 and is cast back (Llama-style `softmax(dtype=float32).to(dtype)`). */
  readonly softmaxInFp32: boolean;
  /** A relative position bias (batch × heads × seq² in the activation dtype) is added to the scores (MPNet, T5). */
  readonly relativePositionBias: boolean;
  /**
   * Transformers hands the attention a single key/value head unexpanded (Falcon-7B's multi-query attention). Its eager
   * matmuls then save key and value broadcast to the query's width from two sequences on (`matmul` expands and copies;
   * a batch of one folds the broadcast into a view), and SDPA, given fewer key/value heads than query heads and no
   * `enable_gqa`, runs PyTorch's math kernel, which upcasts 16-bit inputs to fp32 and keeps the fp32 probabilities.
   * @default false
   */
  readonly unexpandedKeyValue?: boolean;
  /**
   * Each block returns its eager attention probabilities, and the model's loop holds them until the next block returns
   * (transformers' FalconDecoderLayer): under checkpointing, which does not save them, they stay alive beside the next
   * layer's attention.
   * @default false
   */
  readonly blockReturnsProbabilities?: boolean;
  /**
   * Transformers hands SDPA a materialised causal mask (Falcon's model always builds one): PyTorch converts it to the
   * query's dtype, and the fused kernel saves that copy beside its fp32 log-sum-exp and its output, every layer.
   * @default false
   */
  readonly materialisedMask?: boolean;
}

/**
 * GPT-style block layouts (GELU MLP, full multi-head attention) with measured activation costs:
 * - `gpt2`: sequential attention then MLP, tanh GELU written out in Python ops (transformers' `gelu_new`).
 * - `gpt-neox`: attention and MLP in parallel from two norms, PyTorch's fused GELU (Pythia, stablelm-base-alpha).
 * - `phi`: attention and MLP in parallel from one shared norm, `gelu_new` (Phi-1.5, Phi-2).
 * - `bloom`: sequential, a LayerNorm after the embeddings, ALiBi, eager attention only (fp32 softmax), fused
 *   query/key/value and a tanh GELU as one autograd function (BLOOM, BLOOMZ).
 * - `falcon`: Falcon-7B's: attention and MLP in parallel from one LayerNorm, multi-query attention (one key/value
 *   head, handed to the attention unexpanded), rotary, PyTorch's fused GELU; its linear layers are `FalconLinear`,
 *   which transformers' bitsandbytes integration does not quantize.
 * - `falcon-new-decoder`: Falcon-40B's and 180B's (`new_decoder_architecture` with two LayerNorms): attention and MLP
 *   in parallel from a LayerNorm each, grouped key/value heads broadcast to the query's heads before the attention,
 *   a causal mask transformers always materialises, rotary, PyTorch's fused GELU; `FalconLinear` layers, as Falcon-7B.
 */
export const GPT_BLOCKS = ["gpt2", "gpt-neox", "phi", "bloom", "falcon", "falcon-new-decoder"] as const;
export type GptBlock = (typeof GPT_BLOCKS)[number];

/** A transformer's architecture. */
export interface ModelArchitecture {
  readonly family: string;
  readonly type: "decoder-llm" | "vision-language" | "encoder-embedding" | "encoder-decoder";
  /** Unique parameters (tied weights once), vision tower included. */
  readonly parameters: number;
  /** Largest single module's own parameters (DeepSpeed's definition, used by ZeRO-3). */
  readonly largestLayerParameters: number;
  readonly layers: number;
  readonly hiddenSize: number;
  readonly attentionHeads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly intermediateSize: number;
  readonly mlp: MlpKind;
  /** GPT-style layout of a `gelu` decoder. @default - "gpt2" for `gelu` decoders */
  readonly gptBlock?: GptBlock;
  readonly vocabSize: number;
  readonly tiedEmbeddings: boolean;
  readonly maxPositionEmbeddings?: number;
  /** Encoders: output embedding size and the sequence length the model was trained for. */
  readonly embeddingDim?: number;
  readonly maxSequenceLength?: number;
  /** Encoder-decoders: decoder layers. */
  readonly decoderLayers?: number;
  readonly qkvBias?: boolean;
  readonly vision?: VisionTower;
  /** @default - by type: decoders sdpa/eager/flash without dropout; encoders sdpa/eager with dropout 0.1 */
  readonly attention?: AttentionTraits;
  readonly source: string;
}
