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
  readonly source: string;
}
