/**
 * The activation model against the measured table (test/data/activation-calibration.json, produced by
 * calibration/measure_activations.py with torch and transformers on CPU): bytes autograd saves for backward.
 * Tolerance: 1% per row; the model never predicts less than 99% of a measurement.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { headBytesPerToken, korthikantiLayerBytes, layerBytesPerToken } from "../../../core/memory/activations";
import { adapterParameters } from "../../../core/memory/lora";
import type { GptBlock, ModelArchitecture } from "../../../core/models/types";
import { repoRoot } from "../../helpers/fixtures";

type Family = "llama" | "qwen2" | "gemma" | "bert" | "gpt2" | "gpt_neox" | "phi";

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
  /** Measured under torch.autocast to bf16, as the runtime trains mixed precision. */
  autocast?: boolean;
  /** QLoRA as the runtime builds it (calibration/kbit_standin.py): PEFT's fp32 upcast kept, an fp32 stream. */
  qlora?: boolean;
  layerBytesPerToken: number;
  headBytes: number;
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
};
const DEFAULT_TARGETS: Partial<Record<Family, string[]>> = {
  bert: ["query", "value"],
  gpt2: ["c_attn"],
  gpt_neox: ["query_key_value"],
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
const qloraOf = (r: Row) => (r.qlora ? " QLoRA (fp32 stream)" : "");
const kindOf = (r: Row) =>
  !r.lora
    ? "full"
    : `lora ${r.loraTargets ?? "default"}${r.loraHead ? "+lm_head" : ""}${r.loraDropout ? ` dropout ${r.loraDropout}` : ""}`;

describe(`activation model vs measurements (torch ${data.torch}, transformers ${data.transformers})`, () => {
  it("has rows for every family, with and without checkpointing and LoRA", () => {
    expect(new Set(data.rows.map((r) => r.family))).toEqual(
      new Set(["llama", "qwen2", "gemma", "bert", "gpt2", "gpt_neox", "phi"]),
    );
    // 7 families × 3 shapes × checkpointing × LoRA × 2 batch shapes, plus 4 LoRA kinds on the Llama-style three,
    // plus 4 LoRA kinds under autocast on the same three, plus QLoRA on every family with and without checkpointing and
    // on every linear layer with dropout on the Llama-style three.
    expect(data.rows.length).toBe(7 * 3 * 2 * 2 * 2 + 3 * 3 * 4 * 2 + 3 * 3 * 4 * 2 + 7 * 3 * 2 * 2 + 3 * 3 * 2);
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
    const predicted = layerBytesPerToken(arch(r), loraFor(r), 2, "cpu");
    const ratio = predicted / r.layerBytesPerToken;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows
      .filter((r) => r.autocast && !r.checkpointing)
      .map(
        (r) =>
          [`${r.family} h=${r.hidden} i=${r.intermediate} ${kindOf(r)}${qloraOf(r)} ${r.batch}x${r.seq}`, r] as const,
      ),
  )("under autocast, per-layer bytes per token, and each adapter's bf16 weight copy: %s", (_, r) => {
    const m = arch(r);
    const lora = { ...loraFor(r)!, unquantizedPrecision: r.qlora ? ("fp32" as const) : ("bf16" as const) };
    // Autocast's 16-bit copies of the fp32 adapter weights are saved too: the plan counts them in the weights.
    const weightCopies = (2 * adapterParameters(m, lora.rank, lora.targetModules)) / r.layers;
    const predicted = layerBytesPerToken(m, { ...lora, autocast: true }, 2, "cpu") + weightCopies / tokens(r);
    const ratio = predicted / r.layerBytesPerToken;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows
      .filter((r) => r.checkpointing && r.family !== "bert" && !r.qlora)
      .map((r) => [`${r.family} h=${r.hidden} ${r.lora ? "lora" : "full"} ${r.batch}x${r.seq}`, r] as const),
  )("full recomputation keeps each layer's 16-bit input (2·h bytes per token) plus the head: %s", (_, r) => {
    const m = arch(r);
    const predicted = tokens(r) * (r.layers * 2 * r.hidden + headBytesPerToken(m, loraFor(r)) + 4 * r.vocab + 8);
    const ratio = predicted / r.totalBytes;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows
      .filter((r) => r.qlora && r.checkpointing && r.family !== "bert")
      .map((r) => [`${r.family} h=${r.hidden} ${r.batch}x${r.seq}`, r] as const),
  )("QLoRA's fp32 stream: checkpoints keep 4-byte inputs, autocast a bf16 copy of the fp32 head: %s", (_, r) => {
    const m = arch(r);
    const lora = { ...loraFor(r)!, autocast: true, unquantizedPrecision: "fp32" as const };
    const head = headBytesPerToken(m, lora, 2, "cpu");
    const predicted = tokens(r) * (r.layers * 4 * r.hidden + head + 4 * r.vocab + 8) + 2 * r.vocab * r.hidden;
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
    const added = headBytesPerToken(m, loraFor(r), 2, "cpu") - headBytesPerToken(m, loraFor(without), 2, "cpu");
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
