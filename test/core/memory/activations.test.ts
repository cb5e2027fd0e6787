/**
 * The activation model against the measured table (test/data/activation-calibration.json, produced by
 * calibration/measure_activations.py with torch and transformers on CPU): bytes autograd saves for backward.
 * Tolerance: 1% per row; the model never predicts less than 99% of a measurement.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ActivationStep,
  headBytesPerToken,
  korthikantiLayerBytes,
  layerBytesPerToken,
  streamBytesPerHidden,
} from "../../../core/memory/activations";
import { attentionTrainingBytesPerToken } from "../../../core/memory/attention";
import { AUTOCAST_EXTRA } from "../../../core/memory/autocast";
import { blockKind } from "../../../core/memory/activations";
import { adapterParameters } from "../../../core/memory/lora";
import type { AttentionImplementation, GptBlock, ModelArchitecture } from "../../../core/models/types";
import { repoRoot } from "../../helpers/fixtures";

type Family = "llama" | "qwen2" | "gemma" | "bert" | "gpt2" | "gpt_neox" | "phi" | "bloom" | "falcon" | "falcon_new";

interface Row {
  family: Family;
  hidden: number;
  intermediate: number;
  headDim: number;
  heads: number;
  kvHeads: number;
  vocab: number;
  batch: number;
  seq: number;
  checkpointing: boolean;
  lora: boolean;
  /** LoRA beyond the default (query and value, no dropout): which layers, lm_head too, and lora_dropout. */
  loraTargets?: "default" | "all-linear";
  loraHead?: boolean;
  loraDropout?: number;
  /**
   * Measured under CUDA's autocast to bf16 (calibration/cuda_autocast.py), as the runtime trains mixed precision on plain
   * DDP: full training over fp32 weights, LoRA over a bf16 base.
   */
  autocast?: boolean;
  /** Full training under autocast: the bytes of autocast's 16-bit weight copies, kept out of the layers. */
  weightCopyBytes?: number;
  /** Full training under autocast: the tiny model's parameters. */
  parameters?: number;
  /** QLoRA as the runtime builds it (calibration/kbit_standin.py): PEFT's fp32 upcast kept, an fp32 stream. */
  qlora?: boolean;
  /** The attention implementation, where it is not SDPA (BLOOM's rows, which have only eager, leave it out). */
  attention?: "eager";
  layerBytesPerToken: number;
  headBytes: number;
  embedBytes: number;
  totalBytes: number;
  layers: number;
}

const data = JSON.parse(readFileSync(join(repoRoot, "test/data/activation-calibration.json"), "utf8")) as {
  rows: Row[];
  torch: string;
  transformers: string;
};

/** The GPT-style layout of each GELU family measured. */
const GPT_BLOCK: Partial<Record<Family, GptBlock>> = {
  gpt2: "gpt2",
  gpt_neox: "gpt-neox",
  phi: "phi",
  bloom: "bloom",
  falcon: "falcon",
  falcon_new: "falcon-new-decoder",
};

function arch(r: Row): ModelArchitecture {
  const gptBlock = GPT_BLOCK[r.family];
  return {
    family: r.family,
    type: r.family === "bert" ? "encoder-embedding" : "decoder-llm",
    mlp: r.family === "gemma" ? "geglu" : r.family === "bert" || gptBlock ? "gelu" : "swiglu",
    ...(gptBlock ? { gptBlock } : {}),
    parameters: 0,
    largestLayerParameters: 0,
    layers: r.layers,
    hiddenSize: r.hidden,
    attentionHeads: r.heads,
    kvHeads: r.kvHeads,
    headDim: r.headDim,
    intermediateSize: r.intermediate,
    vocabSize: r.vocab,
    tiedEmbeddings: false,
    source: "calibration",
  };
}

/** The modules calibration/measure_activations.py adapted (its LORA_TARGETS, LLAMA_TARGETS). */
const ALL_LINEAR: Partial<Record<Family, string[]>> = {
  bert: ["query", "key", "value", "dense"],
  gpt2: ["c_attn", "c_proj", "c_fc"],
  gpt_neox: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
  phi: ["q_proj", "k_proj", "v_proj", "dense", "fc1", "fc2"],
  bloom: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
  falcon: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
  falcon_new: ["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"],
};
const DEFAULT_TARGETS: Partial<Record<Family, string[]>> = {
  bert: ["query", "value"],
  gpt2: ["c_attn"],
  gpt_neox: ["query_key_value"],
  bloom: ["query_key_value"],
  falcon: ["query_key_value"],
  falcon_new: ["query_key_value"],
};
const LLAMA_ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"];

function loraFor(r: Row) {
  if (!r.lora) return undefined;
  const targets =
    r.loraTargets === "all-linear"
      ? (ALL_LINEAR[r.family] ?? LLAMA_ALL)
      : (DEFAULT_TARGETS[r.family] ?? ["q_proj", "v_proj"]);
  return { rank: 8, targetModules: [...targets, ...(r.loraHead ? ["lm_head"] : [])], dropout: r.loraDropout ?? 0 };
}
const tokens = (r: Row) => r.batch * r.seq;
/** LayerNorm weights and biases per layer, in hidden sizes (RMSNorms cast in Python and keep no copy). */
const LAYER_NORM_PARAMETERS: Record<Family, number> = {
  llama: 0,
  qwen2: 0,
  gemma: 0,
  bert: 4,
  gpt2: 4,
  gpt_neox: 4,
  phi: 2,
  bloom: 4,
  falcon: 2,
  falcon_new: 4,
};
/** The pure 16-bit row measured with the same model, batch and settings as an autocast row. */
const pureTwin = (r: Row): Row =>
  data.rows.find(
    (x) =>
      !x.autocast &&
      x.family === r.family &&
      x.hidden === r.hidden &&
      x.intermediate === r.intermediate &&
      x.heads === r.heads &&
      x.batch === r.batch &&
      x.checkpointing === r.checkpointing &&
      x.lora === r.lora &&
      !x.loraTargets &&
      !x.qlora &&
      x.attention === r.attention,
  )!;
/** How the row's step computed, as the knob search describes it to the activation model. */
function stepOf(r: Row): ActivationStep {
  const lora = loraFor(r);
  return {
    lora: lora && { ...lora, autocast: r.autocast ?? false, unquantizedPrecision: r.qlora ? "fp32" : "bf16" },
    device: "cpu",
    cudaAutocast: r.autocast ?? false,
    microBatchSize: r.batch,
  };
}
/** The attention a row ran: BLOOM has only eager; the others SDPA unless the row says otherwise. */
const attentionOf = (r: Row): AttentionImplementation => (r.family === "bloom" ? "eager" : (r.attention ?? "sdpa"));
/**
 * Per token and layer, what the row's attention adds to its table (./attention.ts): eager scores and what eager keeps
 * beside them (BLOOM, Falcon's eager rows), Falcon-7B's SDPA, which PyTorch runs as its math kernel, and the new
 * decoder's, a fused kernel handed the causal mask; a fused SDPA at dropout 0 adds nothing elsewhere.
 */
function eagerBytes(r: Row): number {
  // The other families' types plan dropout (BERT's hidden dropout) that their rows, measured at dropout 0, lack.
  if (r.family !== "bloom" && r.family !== "falcon" && r.family !== "falcon_new") return 0;
  const input = { seq: r.seq, bytesPerActivation: 2, frozenBase: r.lora, ...stepOf(r) };
  return attentionTrainingBytesPerToken(arch(r), attentionOf(r), input);
}
const qloraOf = (r: Row) => (r.qlora ? " QLoRA (fp32 stream)" : "");
const kindOf = (r: Row) =>
  (!r.lora
    ? "full"
    : `lora ${r.loraTargets ?? "default"}${r.loraHead ? "+lm_head" : ""}${r.loraDropout ? ` dropout ${r.loraDropout}` : ""}`) +
  (r.attention ? ` ${r.attention}` : "");

describe(`activation model vs measurements (torch ${data.torch}, transformers ${data.transformers})`, () => {
  it("has rows for every family, with and without checkpointing and LoRA", () => {
    expect(new Set(data.rows.map((r) => r.family))).toEqual(
      new Set(["llama", "qwen2", "gemma", "bert", "gpt2", "gpt_neox", "phi", "bloom", "falcon", "falcon_new"]),
    );
    // 10 families × 3 shapes × checkpointing × LoRA × 2 batch shapes, plus 4 LoRA kinds on the Llama-style three,
    // plus 4 LoRA kinds under autocast on the same three, plus full training under autocast on every family with and
    // without checkpointing, plus 2 LoRA kinds under autocast on the other seven, plus QLoRA on every family but
    // Falcon's two with and without checkpointing and on every linear layer with dropout on the Llama-style three, plus
    // both Falcons' eager attention, full and LoRA, pure and under autocast.
    expect(data.rows.length).toBe(
      10 * 3 * 2 * 2 * 2 +
        3 * 3 * 4 * 2 +
        3 * 3 * 4 * 2 +
        10 * 3 * 2 * 2 +
        7 * 3 * 2 * 2 +
        8 * 3 * 2 * 2 +
        3 * 3 * 2 +
        2 * 2 * 3 * 2 * 2,
    );
  });

  it.each(
    data.rows
      .filter((r) => !r.checkpointing && !r.autocast && !r.qlora)
      .map(
        (r) =>
          [
            `${r.family} h=${r.hidden} i=${r.intermediate} hd=${r.headDim} ${kindOf(r)} ${r.batch}x${r.seq}`,
            r,
          ] as const,
      ),
  )("per-layer bytes per token: %s", (_, r) => {
    const predicted = layerBytesPerToken(arch(r), stepOf(r)) + eagerBytes(r);
    const ratio = predicted / r.layerBytesPerToken;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows
      .filter((r) => r.autocast && r.lora && !r.checkpointing)
      .map(
        (r) =>
          [`${r.family} h=${r.hidden} i=${r.intermediate} ${kindOf(r)}${qloraOf(r)} ${r.batch}x${r.seq}`, r] as const,
      ),
  )("LoRA under autocast, per-layer bytes per token, and each adapter's bf16 weight copy: %s", (_, r) => {
    const m = arch(r);
    const step = stepOf(r);
    // Autocast's 16-bit copies of the fp32 adapter weights are saved too: the plan counts them in the weights.
    const weightCopies = (2 * adapterParameters(m, step.lora!.rank, step.lora!.targetModules)) / r.layers;
    // And, not planned (autocast.ts), its fp32 copies of the frozen bf16 LayerNorms' weights and biases.
    const normCopies = r.qlora ? 0 : 4 * LAYER_NORM_PARAMETERS[r.family] * r.hidden;
    const predicted = layerBytesPerToken(m, step) + eagerBytes(r) + (weightCopies + normCopies) / tokens(r);
    const ratio = predicted / r.layerBytesPerToken;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows
      .filter((r) => r.autocast && !r.lora && !r.checkpointing)
      .map((r) => [`${r.family} h=${r.hidden} i=${r.intermediate} ${kindOf(r)} ${r.batch}x${r.seq}`, r] as const),
  )("full training under autocast: per-layer and head bytes per token of the fp32 stream: %s", (_, r) => {
    const m = arch(r);
    const layer = (layerBytesPerToken(m, stepOf(r)) + eagerBytes(r)) / r.layerBytesPerToken;
    expect(layer).toBeGreaterThanOrEqual(0.99);
    expect(layer).toBeLessThanOrEqual(1.01);
    // The final norm (and BERT's embedding LayerNorm) against the same model's pure bf16 row; BERT's masked-LM loss
    // also saves fp32 logits (2 more bytes per vocabulary entry), a loss the planner's encoders do not train with.
    const pure = pureTwin(r);
    const measured = r.headBytes + r.embedBytes - pure.headBytes - pure.embedBytes;
    const head = AUTOCAST_EXTRA[blockKind(m)].full.head;
    const planned = tokens(r) * (head.h * r.hidden + head.perToken + (r.family === "bert" ? 2 * r.vocab : 0));
    expect(Math.abs(measured - planned)).toBeLessThanOrEqual(0.01 * r.headBytes);
  });

  it.each(
    data.rows
      .filter((r) => r.autocast && !r.lora && !r.checkpointing)
      .map((r) => [`${r.family} h=${r.hidden} i=${r.intermediate} ${kindOf(r)} ${r.batch}x${r.seq}`, r] as const),
  )(
    "full training under autocast: its 16-bit weight copies fit the 2 bytes per parameter the plan keeps: %s",
    (_, r) => {
      expect(r.weightCopyBytes).toBeGreaterThan(0);
      expect(r.weightCopyBytes).toBeLessThanOrEqual(2 * r.parameters!);
      // Every linear weight is copied: at least 80% of the parameters in these tiny models (the rest are embeddings
      // and norms, which autocast does not cast to 16 bit).
      expect(r.weightCopyBytes).toBeGreaterThanOrEqual(2 * 0.8 * r.parameters!);
    },
  );

  it.each(
    data.rows
      .filter((r) => r.checkpointing && r.family !== "bert")
      .map(
        (r) =>
          [
            `${r.family} h=${r.hidden} ${kindOf(r)}${qloraOf(r)}${r.autocast ? " autocast" : ""} ${r.batch}x${r.seq}`,
            r,
          ] as const,
      ),
  )("full recomputation keeps each layer's input in the stream's dtype, plus the head: %s", (_, r) => {
    const m = arch(r);
    const step = stepOf(r);
    const inputs = r.layers * streamBytesPerHidden(m, step) * r.hidden;
    // QLoRA's fp32 stream: autocast also saves a bf16 copy of the fp32 head.
    const headCopy = r.qlora ? 2 * r.vocab * r.hidden : 0;
    const predicted = tokens(r) * (inputs + headBytesPerToken(m, step) + 4 * r.vocab + 8) + headCopy;
    const ratio = predicted / r.totalBytes;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows.filter((r) => r.loraHead).map((r) => [`${r.family} h=${r.hidden} ${r.batch}x${r.seq}`, r] as const),
  )("an adapter on lm_head keeps what the measurement adds to the head: %s", (_, r) => {
    const without = data.rows.find(
      (x) =>
        x.family === r.family &&
        x.hidden === r.hidden &&
        x.intermediate === r.intermediate &&
        x.batch === r.batch &&
        x.loraTargets === "all-linear" &&
        !x.loraHead &&
        x.loraDropout === 0,
    )!;
    const m = arch(r);
    const added = headBytesPerToken(m, stepOf(r)) - headBytesPerToken(m, stepOf(without));
    expect(added * tokens(r)).toBe(r.headBytes - without.headBytes);
  });

  it("implements Korthikanti et al.'s formula: sbh(34 + 5as/h) per layer, 2sbh with full recomputation", () => {
    // GPT-3 175B: h = 12288, a = 96, s = 2048, so 5as/h = 80 (the paper's example).
    expect(korthikantiLayerBytes({ seq: 2048, batch: 1, hidden: 12288, heads: 96 })).toBe(2048 * 12288 * (34 + 80));
    expect(korthikantiLayerBytes({ seq: 2048, batch: 1, hidden: 12288, heads: 96, recompute: true })).toBe(
      2 * 2048 * 12288,
    );
  });

  it("keeps the calibrated GPT block above Korthikanti's flash-attention, no-dropout count (18h + 4i)", () => {
    for (const r of data.rows.filter((x) => x.family === "gpt2" && !x.checkpointing && !x.lora)) {
      expect(layerBytesPerToken(arch(r))).toBeGreaterThanOrEqual(18 * r.hidden + 4 * r.intermediate);
    }
  });
});
