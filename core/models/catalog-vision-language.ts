/**
 * Architectures of common vision-language models (a vision encoder and a decoder LLM), copied from
 * `shared/facts/models.json` (parameter counts computed by instantiating each config on the meta device; sources per
 * entry).
 */
import type { ModelArchitecture } from "./types";

export const VISION_LANGUAGE_MODEL_IDS = [
  "Qwen/Qwen2-VL-2B-Instruct",
  "Qwen/Qwen2-VL-7B-Instruct",
  "llava-hf/llava-1.5-7b-hf",
] as const;
export type VisionLanguageModelId = (typeof VISION_LANGUAGE_MODEL_IDS)[number];

/** The table. */
export const VISION_LANGUAGE_MODELS: { readonly [K in VisionLanguageModelId]: ModelArchitecture } = {
  "Qwen/Qwen2-VL-2B-Instruct": {
    family: "qwen2-vl",
    type: "vision-language",
    parameters: 2208985600,
    largestLayerParameters: 233373696,
    layers: 28,
    hiddenSize: 1536,
    attentionHeads: 12,
    kvHeads: 2,
    headDim: 128,
    intermediateSize: 8960,
    mlp: "swiglu",
    vocabSize: 151936,
    tiedEmbeddings: true,
    maxPositionEmbeddings: 32768,
    vision: {
      parameters: 665271296,
      projectorParameters: 34087936,
      layers: 32,
      hiddenSize: 1280,
      attentionHeads: 16,
      intermediateSize: 5120,
      patchSize: 14,
      dynamicResolution: true,
      defaultMaxImageTokens: 1280,
    },
    source:
      "transformers src/transformers/models/qwen2_vl (configuration + image_processing_qwen2_vl.py smart_resize, v5.18 wheel)",
  },
  "Qwen/Qwen2-VL-7B-Instruct": {
    family: "qwen2-vl",
    type: "vision-language",
    parameters: 8291375616,
    largestLayerParameters: 544997376,
    layers: 28,
    hiddenSize: 3584,
    attentionHeads: 28,
    kvHeads: 4,
    headDim: 128,
    intermediateSize: 18944,
    mlp: "swiglu",
    vocabSize: 152064,
    tiedEmbeddings: false,
    maxPositionEmbeddings: 32768,
    vision: {
      parameters: 675759104,
      projectorParameters: 44575744,
      layers: 32,
      hiddenSize: 1280,
      attentionHeads: 16,
      intermediateSize: 5120,
      patchSize: 14,
      dynamicResolution: true,
      defaultMaxImageTokens: 1280,
    },
    source:
      "transformers src/transformers/models/qwen2_vl (configuration + image_processing_qwen2_vl.py smart_resize, v5.18 wheel)",
  },
  "llava-hf/llava-1.5-7b-hf": {
    family: "llava-1.5",
    type: "vision-language",
    parameters: 7063427072,
    largestLayerParameters: 131334144,
    layers: 32,
    hiddenSize: 4096,
    attentionHeads: 32,
    kvHeads: 32,
    headDim: 128,
    intermediateSize: 11008,
    mlp: "swiglu",
    vocabSize: 32064,
    tiedEmbeddings: false,
    maxPositionEmbeddings: 4096,
    vision: {
      parameters: 324487168,
      projectorParameters: 20979712,
      layers: 24,
      hiddenSize: 1024,
      attentionHeads: 16,
      intermediateSize: 4096,
      patchSize: 14,
      dynamicResolution: false,
      defaultMaxImageTokens: 576,
    },
    source:
      "transformers LlavaConfig / CLIPVisionConfig (v5.18) with llava-1.5-7b-hf values: text Llama-2-7B " +
      "(Vicuna-7B-v1.5), vocab 32064, image_token_index 32000",
  },
};
