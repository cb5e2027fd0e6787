/**
 * The activation model against the measured table (test/data/activation-calibration.json, produced by
 * calibration/measure_activations.py with torch and transformers on CPU): bytes autograd saves for backward.
 * Tolerance: 1% per row; the model never predicts less than 99% of a measurement.
 */

import { describe, expect, it } from "vitest";
import {
  blockKind,
  headBytesPerToken,
  korthikantiLayerBytes,
  layerBytesPerToken,
  streamBytesPerHidden,
} from "../../../core/memory/activations";
import { AUTOCAST_EXTRA } from "../../../core/memory/autocast";
import { adapterParameters } from "../../../core/memory/lora";
import {
  arch,
  data,
  eagerBytes,
  kindOf,
  LAYER_NORM_PARAMETERS,
  pureTwin,
  qloraOf,
  stepOf,
  tokens,
} from "./activation-rows";

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
