/**
 * Published cases of Falcon-7B's layout (`gptBlock: falcon`): LitGPT's LoRA of falcon-7b on one A10G. LitGPT builds
 * Falcon its own way (it expands the one key/value head and runs SDPA's fused kernel, which keeps no scores), where
 * the runtime's transformers runs eager (the planner's default for Falcon) or PyTorch's math kernel (SDPA), both keeping
 * the scores: the plan must not fall below LitGPT's peak.
 */
import type { ModelArchitecture } from "../../../core/models/types";
import { GIB, single, train, type PublishedCase } from "./published-helpers";

/**
 * tiiuae/falcon-7b's config.json (FalconForCausalLM: hidden 4544, 71 heads, 32 layers, multi_query, parallel_attn,
 * bias false, vocabulary 65,024, tied embeddings; ffn 4 × hidden); parameters counted from those widths (qkv 4544 ×
 * 4672, dense 4544², two 4544 × 18176 MLP matrices and a LayerNorm per layer, the embedding and the final LayerNorm).
 */
export const FALCON_7B: ModelArchitecture = {
  family: "falcon",
  type: "decoder-llm",
  gptBlock: "falcon",
  parameters: 6_921_720_704,
  largestLayerParameters: 295_469_056,
  layers: 32,
  hiddenSize: 4544,
  attentionHeads: 71,
  kvHeads: 1,
  headDim: 64,
  intermediateSize: 18_176,
  mlp: "gelu",
  vocabSize: 65_024,
  tiedEmbeddings: true,
  source: "huggingface.co/tiiuae/falcon-7b config.json; parameters counted from its widths",
};

/**
 * tiiuae/falcon-40b's widths (new_decoder_architecture: hidden 8192, 128 heads of 64, 8 key/value heads, 60 layers,
 * ffn 32,768, vocabulary 65,024), as llama.cpp's Falcon loader prints them for that checkpoint; parameters counted from
 * those widths (qkv 8192 × 9216, dense 8192², two 8192 × 32768 MLP matrices and two LayerNorms per layer, the
 * embedding, the final LayerNorm and an untied LM head). Not a published memory case: the layout tests' architecture.
 */
export const FALCON_40B: ModelArchitecture = {
  family: "falcon",
  type: "decoder-llm",
  gptBlock: "falcon-new-decoder",
  parameters: 41_835_970_560,
  largestLayerParameters: 532_676_608,
  layers: 60,
  hiddenSize: 8192,
  attentionHeads: 128,
  kvHeads: 8,
  headDim: 64,
  intermediateSize: 32_768,
  mlp: "gelu",
  vocabSize: 65_024,
  tiedEmbeddings: false,
  source: "llama.cpp's Falcon loader output for tiiuae/falcon-40b; parameters counted from its widths",
};

const LITGPT =
  "LitGPT config_hub/finetune/README.md @03ffc5515b25 and falcon-7b/lora.yaml: r 32, query+value (one fused qkv " +
  "layer), lora_dropout 0.05, bf16-true, Alpaca2k (512), micro-batch 1, 1×A10G, 16.69 GB (max_memory_allocated / 1e9)";

export const FALCON_CASES: readonly PublishedCase[] = [
  {
    id: "falcon-7b LoRA r32 1×512 (A10G, LitGPT)",
    source: LITGPT,
    what: "gptBlock falcon planned as the runtime runs it (eager keeps 16-bit scores that LitGPT's fused kernel does not)",
    rule: "lower-bound",
    unit: "GB",
    measured: 16.69,
    predicted: () => {
      const lora = { rank: 32, targetModules: ["query_key_value"], quantization: "none" as const, dropout: 0.05 };
      const e = train(FALCON_7B, { usableGiB: 21.99, sequenceLength: 512, lora }, single(1));
      return (e.allocatedPeakGiB * GIB) / 1e9;
    },
  },
];
