/**
 * Architectures of common embedding encoders (BERT, XLM-R, MPNet, NomicBERT) and the T5 models used to
 * cross-check DeepSpeed's estimator, copied from `shared/facts/models.json` (sources per entry).
 */
import type { ModelArchitecture } from "./types";

/** Encoder and encoder-decoder model ids in the catalog. */
export const ENCODER_MODEL_IDS = [
  "BAAI/bge-small-en-v1.5",
  "BAAI/bge-base-en-v1.5",
  "BAAI/bge-large-en-v1.5",
  "BAAI/bge-m3",
  "intfloat/e5-large-v2",
  "intfloat/multilingual-e5-large",
  "sentence-transformers/all-MiniLM-L6-v2",
  "sentence-transformers/all-mpnet-base-v2",
  "nomic-ai/nomic-embed-text-v1.5",
  "google-t5/t5-3b",
  "bigscience/T0_3B",
] as const;
export type EncoderModelId = (typeof ENCODER_MODEL_IDS)[number];

/** The table. */
export const ENCODER_MODELS: { readonly [K in EncoderModelId]: ModelArchitecture } = {
  "BAAI/bge-small-en-v1.5": {
    family: "bge-v1.5", type: "encoder-embedding", parameters: 33360000, largestLayerParameters: 11720448,
    layers: 12, hiddenSize: 384, attentionHeads: 12, kvHeads: 12, headDim: 32,
    intermediateSize: 1536, mlp: "gelu", vocabSize: 30522, tiedEmbeddings: false, maxPositionEmbeddings: 512,
    embeddingDim: 384, maxSequenceLength: 512,
    source: "xorbitsai/inference doc/source/models/builtin/embedding/bge-small-en-v1.5.rst (dims 384, max tokens 512)",
  },
  "BAAI/bge-base-en-v1.5": {
    family: "bge-v1.5", type: "encoder-embedding", parameters: 109482240, largestLayerParameters: 23440896,
    layers: 12, hiddenSize: 768, attentionHeads: 12, kvHeads: 12, headDim: 64,
    intermediateSize: 3072, mlp: "gelu", vocabSize: 30522, tiedEmbeddings: false, maxPositionEmbeddings: 512,
    embeddingDim: 768, maxSequenceLength: 512,
    source: "xorbitsai/inference doc/source/models/builtin/embedding/bge-base-en-v1.5.rst (dims 768, max tokens 512)",
  },
  "BAAI/bge-large-en-v1.5": {
    family: "bge-v1.5", type: "encoder-embedding", parameters: 335141888, largestLayerParameters: 31254528,
    layers: 24, hiddenSize: 1024, attentionHeads: 16, kvHeads: 16, headDim: 64,
    intermediateSize: 4096, mlp: "gelu", vocabSize: 30522, tiedEmbeddings: false, maxPositionEmbeddings: 512,
    embeddingDim: 1024, maxSequenceLength: 512,
    source: "xorbitsai/inference doc/source/models/builtin/embedding/bge-large-en-v1.5.rst (dims 1024, max tokens 512)",
  },
  "BAAI/bge-m3": {
    family: "bge-m3", type: "encoder-embedding", parameters: 567754752, largestLayerParameters: 256002048,
    layers: 24, hiddenSize: 1024, attentionHeads: 16, kvHeads: 16, headDim: 64,
    intermediateSize: 4096, mlp: "gelu", vocabSize: 250002, tiedEmbeddings: false, maxPositionEmbeddings: 8194,
    embeddingDim: 1024, maxSequenceLength: 8192,
    source: "xorbitsai/inference doc/source/models/builtin/embedding/bge-m3.rst (dims 1024, max tokens 8192)",
  },
  "intfloat/e5-large-v2": {
    family: "e5-v2", type: "encoder-embedding", parameters: 335141888, largestLayerParameters: 31254528,
    layers: 24, hiddenSize: 1024, attentionHeads: 16, kvHeads: 16, headDim: 64,
    intermediateSize: 4096, mlp: "gelu", vocabSize: 30522, tiedEmbeddings: false, maxPositionEmbeddings: 512,
    embeddingDim: 1024, maxSequenceLength: 512,
    source: "xorbitsai/inference doc/source/models/builtin/embedding/e5-large-v2.rst (dims 1024, max tokens 512)",
  },
  "intfloat/multilingual-e5-large": {
    family: "multilingual-e5", type: "encoder-embedding", parameters: 559890432, largestLayerParameters: 256002048,
    layers: 24, hiddenSize: 1024, attentionHeads: 16, kvHeads: 16, headDim: 64,
    intermediateSize: 4096, mlp: "gelu", vocabSize: 250002, tiedEmbeddings: false, maxPositionEmbeddings: 514,
    embeddingDim: 1024, maxSequenceLength: 512,
    source: "xorbitsai/inference doc/source/models/builtin/embedding/multilingual-e5-large.rst (dims 1024, max tokens 514)",
  },
  "sentence-transformers/all-MiniLM-L6-v2": {
    family: "sentence-transformers", type: "encoder-embedding", parameters: 22713216, largestLayerParameters: 11720448,
    layers: 6, hiddenSize: 384, attentionHeads: 12, kvHeads: 12, headDim: 32,
    intermediateSize: 1536, mlp: "gelu", vocabSize: 30522, tiedEmbeddings: false, maxPositionEmbeddings: 512,
    embeddingDim: 384, maxSequenceLength: 256,
    source: "all-MiniLM-L6-v2 config.json copies (docs corpus, e.g. huggingface.co/Xenova/transformers.js .../all-MiniLM-L6-v2/default/config.json): 6 layers, 384, 12 heads, 1536, vocab 30522",
  },
  "sentence-transformers/all-mpnet-base-v2": {
    family: "sentence-transformers", type: "encoder-embedding", parameters: 109486464, largestLayerParameters: 23444736,
    layers: 12, hiddenSize: 768, attentionHeads: 12, kvHeads: 12, headDim: 64,
    intermediateSize: 3072, mlp: "gelu", vocabSize: 30527, tiedEmbeddings: false, maxPositionEmbeddings: 514,
    embeddingDim: 768, maxSequenceLength: 384,
    source: "https://huggingface.co/sentence-transformers/all-mpnet-base-v2/blob/main/config.json (MPNet base, vocab 30527, max_position_embeddings 514; not in index, values as published)",
  },
  "nomic-ai/nomic-embed-text-v1.5": {
    family: "nomic-embed", type: "encoder-embedding", parameters: 136731648, largestLayerParameters: 23445504,
    layers: 12, hiddenSize: 768, attentionHeads: 12, kvHeads: 12, headDim: 64,
    intermediateSize: 3072, mlp: "swiglu", vocabSize: 30528, tiedEmbeddings: false, maxPositionEmbeddings: 8192,
    embeddingDim: 768, maxSequenceLength: 8192,
    source: "nomic_bert config copies in index (e.g. index id 63552095897): n_embd 768, n_layer 12, n_head 12, n_inner 3072, vocab 30528, n_positions 8192, rotary_emb_fraction 1.0, rotary_emb_base 1000, qkv/mlp bias false, activation swiglu",
  },
  "google-t5/t5-3b": {
    family: "t5", type: "encoder-decoder", parameters: 2851598336, largestLayerParameters: 32899072,
    layers: 24, hiddenSize: 1024, attentionHeads: 32, kvHeads: 32, headDim: 128,
    intermediateSize: 16384, mlp: "relu", vocabSize: 32128, tiedEmbeddings: true,
    decoderLayers: 24,
    source: "deepspeedai/DeepSpeed docs/code-docs/source/memory.rst (t5-3b: 2851M total params, 32M largest layer params)",
  },
  "bigscience/T0_3B": {
    family: "t5 (T5-v1.1-LM-adapted XL)", type: "encoder-decoder", parameters: 2849757184, largestLayerParameters: 65798144,
    layers: 24, hiddenSize: 2048, attentionHeads: 32, kvHeads: 32, headDim: 64,
    intermediateSize: 5120, mlp: "geglu", vocabSize: 32128, tiedEmbeddings: false,
    decoderLayers: 24,
    source: "huggingface/transformers docs/source/en/deepspeed.md (Memory requirements: bigscience/T0_3B, 2783M total params, 65M largest layer params; 1 GPU: 46.91GB/GPU no offload, 5.43GB offload_optimizer=cpu, 0.25GB full offload)",
  },
};
