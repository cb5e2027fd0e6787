/** Decoder LLMs and vision-language models: the catalog's generative models, from their two tables. */
import { TEXT_DECODER_MODEL_IDS, TEXT_DECODER_MODELS } from "./catalog-text-decoders";
import { VISION_LANGUAGE_MODEL_IDS, VISION_LANGUAGE_MODELS } from "./catalog-vision-language";
import type { ModelArchitecture } from "./types";

/** Decoder and vision-language model ids in the catalog. */
export const DECODER_MODEL_IDS = [...TEXT_DECODER_MODEL_IDS, ...VISION_LANGUAGE_MODEL_IDS] as const;
export type DecoderModelId = (typeof DECODER_MODEL_IDS)[number];

/** The table. */
export const DECODER_MODELS: { readonly [K in DecoderModelId]: ModelArchitecture } = {
  ...TEXT_DECODER_MODELS,
  ...VISION_LANGUAGE_MODELS,
};
