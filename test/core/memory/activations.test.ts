/**
 * The activation model against the measured table (test/data/activation-calibration.json, produced by
 * calibration/measure_activations.py with torch and transformers on CPU): bytes autograd saves for backward.
 * Tolerance: 1% per row; the model never predicts less than 99% of a measurement.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { headBytesPerToken, korthikantiLayerBytes, layerBytesPerToken } from "../../../core/memory/activations";
import type { ModelArchitecture } from "../../../core/models/types";
import { repoRoot } from "../../helpers/fixtures";

interface Row {
  family: "llama" | "qwen2" | "gemma" | "bert" | "gpt2";
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

function arch(r: Row): ModelArchitecture {
  return {
    family: r.family,
    type: r.family === "bert" ? "encoder-embedding" : "decoder-llm",
    mlp: r.family === "gemma" ? "geglu" : r.family === "bert" || r.family === "gpt2" ? "gelu" : "swiglu",
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

const lora = { rank: 8, targetModules: ["q_proj", "v_proj"] };
const loraFor = (r: Row) =>
  r.lora ? (r.family === "gpt2" ? { rank: 8, targetModules: ["c_attn"] } : lora) : undefined;
const tokens = (r: Row) => r.batch * r.seq;

describe(`activation model vs measurements (torch ${data.torch}, transformers ${data.transformers})`, () => {
  it("has rows for every family, with and without checkpointing and LoRA", () => {
    expect(new Set(data.rows.map((r) => r.family))).toEqual(new Set(["llama", "qwen2", "gemma", "bert", "gpt2"]));
    expect(data.rows.length).toBe(5 * 3 * 2 * 2 * 2);
  });

  it.each(
    data.rows
      .filter((r) => !r.checkpointing)
      .map(
        (r) =>
          [
            `${r.family} h=${r.hidden} i=${r.intermediate} hd=${r.headDim} ${r.lora ? "lora" : "full"} ${r.batch}x${r.seq}`,
            r,
          ] as const,
      ),
  )("per-layer bytes per token: %s", (_, r) => {
    const predicted = layerBytesPerToken(arch(r), loraFor(r));
    const ratio = predicted / r.layerBytesPerToken;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
  });

  it.each(
    data.rows
      .filter((r) => r.checkpointing && r.family !== "bert")
      .map((r) => [`${r.family} h=${r.hidden} ${r.lora ? "lora" : "full"} ${r.batch}x${r.seq}`, r] as const),
  )("full recomputation keeps each layer's 16-bit input (2·h bytes per token) plus the head: %s", (_, r) => {
    const m = arch(r);
    const predicted = tokens(r) * (r.layers * 2 * r.hidden + headBytesPerToken(m, loraFor(r)) + 4 * r.vocab + 8);
    const ratio = predicted / r.totalBytes;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.01);
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
