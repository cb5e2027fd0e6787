/**
 * Architectures of common decoder LLMs and vision-language models, copied from `shared/facts/models.json`
 * (parameter counts computed by instantiating each config on the meta device; sources per entry).
 */
import type { ModelArchitecture } from "./types";

/** Decoder and vision-language model ids in the catalog. */
export const DECODER_MODEL_IDS = [
  "meta-llama/Llama-3.2-1B",
  "meta-llama/Llama-3.2-3B",
  "meta-llama/Llama-3.1-8B",
  "meta-llama/Llama-3.1-70B",
  "meta-llama/Llama-2-7b-hf",
  "meta-llama/Llama-2-13b-hf",
  "mistralai/Mistral-7B-v0.1",
  "Qwen/Qwen2.5-0.5B",
  "Qwen/Qwen2.5-1.5B",
  "Qwen/Qwen2.5-7B",
  "Qwen/Qwen2.5-14B",
  "Qwen/Qwen2.5-32B",
  "Qwen/Qwen2.5-72B",
  "google/gemma-7b",
  "google/gemma-2-9b",
  "microsoft/Phi-3-mini-4k-instruct",
  "Qwen/Qwen2-VL-2B-Instruct",
  "Qwen/Qwen2-VL-7B-Instruct",
  "llava-hf/llava-1.5-7b-hf",
] as const;
export type DecoderModelId = (typeof DECODER_MODEL_IDS)[number];

/** The table. */
export const DECODER_MODELS: { readonly [K in DecoderModelId]: ModelArchitecture } = {
  "meta-llama/Llama-3.2-1B": {
    family: "llama-3.2", type: "decoder-llm", parameters: 1235814400, largestLayerParameters: 262668288,
    layers: 16, hiddenSize: 2048, attentionHeads: 32, kvHeads: 8, headDim: 64,
    intermediateSize: 8192, mlp: "swiglu", vocabSize: 128256, tiedEmbeddings: true, maxPositionEmbeddings: 131072,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Llama-3.x entry; URL comment https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json)",
  },
  "meta-llama/Llama-3.2-3B": {
    family: "llama-3.2", type: "decoder-llm", parameters: 3212749824, largestLayerParameters: 394002432,
    layers: 28, hiddenSize: 3072, attentionHeads: 24, kvHeads: 8, headDim: 128,
    intermediateSize: 8192, mlp: "swiglu", vocabSize: 128256, tiedEmbeddings: true, maxPositionEmbeddings: 131072,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Llama-3.x entry; URL comment https://huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json)",
  },
  "meta-llama/Llama-3.1-8B": {
    family: "llama-3.1", type: "decoder-llm", parameters: 8030261248, largestLayerParameters: 525336576,
    layers: 32, hiddenSize: 4096, attentionHeads: 32, kvHeads: 8, headDim: 128,
    intermediateSize: 14336, mlp: "swiglu", vocabSize: 128256, tiedEmbeddings: false, maxPositionEmbeddings: 131072,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Llama-3.x entry; URL comment https://huggingface.co/meta-llama/Meta-Llama-3.1-8B/blob/main/config.json)",
  },
  "meta-llama/Llama-3.1-70B": {
    family: "llama-3.1", type: "decoder-llm", parameters: 70553706496, largestLayerParameters: 1050673152,
    layers: 80, hiddenSize: 8192, attentionHeads: 64, kvHeads: 8, headDim: 128,
    intermediateSize: 28672, mlp: "swiglu", vocabSize: 128256, tiedEmbeddings: false, maxPositionEmbeddings: 131072,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Llama-3.x entry; URL comment https://huggingface.co/meta-llama/Meta-Llama-3.1-70B/blob/main/config.json)",
  },
  "meta-llama/Llama-2-7b-hf": {
    family: "llama-2", type: "decoder-llm", parameters: 6738415616, largestLayerParameters: 131072000,
    layers: 32, hiddenSize: 4096, attentionHeads: 32, kvHeads: 32, headDim: 128,
    intermediateSize: 11008, mlp: "swiglu", vocabSize: 32000, tiedEmbeddings: false, maxPositionEmbeddings: 4096,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (llama_2 entry; URL comment https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json)",
  },
  "meta-llama/Llama-2-13b-hf": {
    family: "llama-2", type: "decoder-llm", parameters: 13015864320, largestLayerParameters: 163840000,
    layers: 40, hiddenSize: 5120, attentionHeads: 40, kvHeads: 40, headDim: 128,
    intermediateSize: 13824, mlp: "swiglu", vocabSize: 32000, tiedEmbeddings: false, maxPositionEmbeddings: 4096,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (llama_2 entry; URL comment https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json)",
  },
  "mistralai/Mistral-7B-v0.1": {
    family: "mistral", type: "decoder-llm", parameters: 7241732096, largestLayerParameters: 131072000,
    layers: 32, hiddenSize: 4096, attentionHeads: 32, kvHeads: 8, headDim: 128,
    intermediateSize: 14336, mlp: "swiglu", vocabSize: 32000, tiedEmbeddings: false, maxPositionEmbeddings: 32768,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Mistral-7B-v0.1: n_query_groups 8, sliding_window_size 4096; litgpt block_size 4096)",
  },
  "Qwen/Qwen2.5-0.5B": {
    family: "qwen2.5", type: "decoder-llm", parameters: 494032768, largestLayerParameters: 136134656,
    layers: 24, hiddenSize: 896, attentionHeads: 14, kvHeads: 2, headDim: 64,
    intermediateSize: 4864, mlp: "swiglu", vocabSize: 151936, tiedEmbeddings: true, maxPositionEmbeddings: 32768,
    qkvBias: true,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (qwen_2_5 entry; URL comment https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json)",
  },
  "Qwen/Qwen2.5-1.5B": {
    family: "qwen2.5", type: "decoder-llm", parameters: 1543714304, largestLayerParameters: 233373696,
    layers: 28, hiddenSize: 1536, attentionHeads: 12, kvHeads: 2, headDim: 128,
    intermediateSize: 8960, mlp: "swiglu", vocabSize: 151936, tiedEmbeddings: true, maxPositionEmbeddings: 131072,
    qkvBias: true,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (qwen_2_5 entry; URL comment https://huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json)",
  },
  "Qwen/Qwen2.5-7B": {
    family: "qwen2.5", type: "decoder-llm", parameters: 7615616512, largestLayerParameters: 544997376,
    layers: 28, hiddenSize: 3584, attentionHeads: 28, kvHeads: 4, headDim: 128,
    intermediateSize: 18944, mlp: "swiglu", vocabSize: 152064, tiedEmbeddings: false, maxPositionEmbeddings: 131072,
    qkvBias: true,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (qwen_2_5 entry; URL comment https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json)",
  },
  "Qwen/Qwen2.5-14B": {
    family: "qwen2.5", type: "decoder-llm", parameters: 14770033664, largestLayerParameters: 778567680,
    layers: 48, hiddenSize: 5120, attentionHeads: 40, kvHeads: 8, headDim: 128,
    intermediateSize: 13824, mlp: "swiglu", vocabSize: 152064, tiedEmbeddings: false, maxPositionEmbeddings: 131072,
    qkvBias: true,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (qwen_2_5 entry; URL comment https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json)",
  },
  "Qwen/Qwen2.5-32B": {
    family: "qwen2.5", type: "decoder-llm", parameters: 32763876352, largestLayerParameters: 778567680,
    layers: 64, hiddenSize: 5120, attentionHeads: 40, kvHeads: 8, headDim: 128,
    intermediateSize: 27648, mlp: "swiglu", vocabSize: 152064, tiedEmbeddings: false, maxPositionEmbeddings: 131072,
    qkvBias: true,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (qwen_2_5 entry; URL comment https://huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json)",
  },
  "Qwen/Qwen2.5-72B": {
    family: "qwen2.5", type: "decoder-llm", parameters: 72706203648, largestLayerParameters: 1245708288,
    layers: 80, hiddenSize: 8192, attentionHeads: 64, kvHeads: 8, headDim: 128,
    intermediateSize: 29568, mlp: "swiglu", vocabSize: 152064, tiedEmbeddings: false, maxPositionEmbeddings: 131072,
    qkvBias: true,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (qwen_2_5 entry; URL comment https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json)",
  },
  "google/gemma-7b": {
    family: "gemma", type: "decoder-llm", parameters: 8537680896, largestLayerParameters: 786432000,
    layers: 28, hiddenSize: 3072, attentionHeads: 16, kvHeads: 16, headDim: 256,
    intermediateSize: 24576, mlp: "geglu", vocabSize: 256000, tiedEmbeddings: true, maxPositionEmbeddings: 8192,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Gemma-7b: head_size 256, GemmaMLP gelu tanh)",
  },
  "google/gemma-2-9b": {
    family: "gemma-2", type: "decoder-llm", parameters: 9241705984, largestLayerParameters: 917504000,
    layers: 42, hiddenSize: 3584, attentionHeads: 16, kvHeads: 8, headDim: 256,
    intermediateSize: 14336, mlp: "geglu", vocabSize: 256000, tiedEmbeddings: true, maxPositionEmbeddings: 8192,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Gemma-2-9b: sliding_window_size 4096 on alternate layers, softcapping 50/30, post-attn/post-mlp norms)",
  },
  "microsoft/Phi-3-mini-4k-instruct": {
    family: "phi-3", type: "decoder-llm", parameters: 3821079552, largestLayerParameters: 98500608,
    layers: 32, hiddenSize: 3072, attentionHeads: 32, kvHeads: 32, headDim: 96,
    intermediateSize: 8192, mlp: "swiglu", vocabSize: 32064, tiedEmbeddings: false, maxPositionEmbeddings: 4096,
    source: "Lightning-AI/litgpt litgpt/config.py @26857050fe3f (Phi-3-mini-4k-instruct: padded_vocab 32064, LLaMAMLP, head_size 96)",
  },
  "Qwen/Qwen2-VL-2B-Instruct": {
    family: "qwen2-vl", type: "vision-language", parameters: 2208985600, largestLayerParameters: 233373696,
    layers: 28, hiddenSize: 1536, attentionHeads: 12, kvHeads: 2, headDim: 128,
    intermediateSize: 8960, mlp: "swiglu", vocabSize: 151936, tiedEmbeddings: true, maxPositionEmbeddings: 32768,
    vision: { parameters: 665271296, projectorParameters: 34087936, layers: 32, hiddenSize: 1280, attentionHeads: 16, intermediateSize: 5120, patchSize: 14, dynamicResolution: true, defaultMaxImageTokens: 1280 },
    source: "transformers src/transformers/models/qwen2_vl (configuration + image_processing_qwen2_vl.py smart_resize, v5.18 wheel)",
  },
  "Qwen/Qwen2-VL-7B-Instruct": {
    family: "qwen2-vl", type: "vision-language", parameters: 8291375616, largestLayerParameters: 544997376,
    layers: 28, hiddenSize: 3584, attentionHeads: 28, kvHeads: 4, headDim: 128,
    intermediateSize: 18944, mlp: "swiglu", vocabSize: 152064, tiedEmbeddings: false, maxPositionEmbeddings: 32768,
    vision: { parameters: 675759104, projectorParameters: 44575744, layers: 32, hiddenSize: 1280, attentionHeads: 16, intermediateSize: 5120, patchSize: 14, dynamicResolution: true, defaultMaxImageTokens: 1280 },
    source: "transformers src/transformers/models/qwen2_vl (configuration + image_processing_qwen2_vl.py smart_resize, v5.18 wheel)",
  },
  "llava-hf/llava-1.5-7b-hf": {
    family: "llava-1.5", type: "vision-language", parameters: 7063427072, largestLayerParameters: 131334144,
    layers: 32, hiddenSize: 4096, attentionHeads: 32, kvHeads: 32, headDim: 128,
    intermediateSize: 11008, mlp: "swiglu", vocabSize: 32064, tiedEmbeddings: false, maxPositionEmbeddings: 4096,
    vision: { parameters: 324487168, projectorParameters: 20979712, layers: 24, hiddenSize: 1024, attentionHeads: 16, intermediateSize: 4096, patchSize: 14, dynamicResolution: false, defaultMaxImageTokens: 576 },
    source: "transformers LlavaConfig / CLIPVisionConfig (v5.18) with llava-1.5-7b-hf values: text Llama-2-7B (Vicuna-7B-v1.5), vocab 32064, image_token_index 32000",
  },
};
