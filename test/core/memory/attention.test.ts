/**
 * The attention and dropout terms against the CPU calibration (test/data/attention-calibration.json, produced by
 * calibration/measure_attention.py with torch and transformers): saved-for-backward bytes per layer and token in
 * training, and peak live bytes of no-grad encoder forwards. Training: never below 99% of a measurement, at most 10%
 * above. Inference: never below the measurement, at most 1.6 times it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { layerBytesPerToken } from "../../../core/memory/activations";
import {
  attentionInferenceBytes,
  attentionTraits,
  defaultAttention,
  scoreTransientBytesPerToken,
} from "../../../core/memory/attention";
import { forwardWorkingSetBytesPerToken } from "../../../core/memory/estimate-inference";
import { catalogModel } from "../../../core/models";
import type { AttentionImplementation, AttentionTraits, ModelArchitecture } from "../../../core/models/types";
import { attentionTrainingBytesPerToken } from "../../../core/memory/attention";
import { repoRoot } from "../../helpers/fixtures";

interface Common {
  family: "llama" | "gemma" | "bert" | "mpnet";
  attention: AttentionImplementation;
  hidden: number;
  intermediate: number;
  heads: number;
  batch: number;
  seq: number;
}
interface TrainingRow extends Common {
  attentionDropout: number;
  hiddenDropout: number;
  kvHeads: number;
  layerBytesPerToken: number;
}
interface InferenceRow extends Common {
  peakBytes: number;
}
const data = JSON.parse(readFileSync(join(repoRoot, "test/data/attention-calibration.json"), "utf8")) as {
  torch: string;
  transformers: string;
  training: TrainingRow[];
  inference: InferenceRow[];
};

function arch(r: Common & { kvHeads?: number; attentionDropout?: number; hiddenDropout?: number }): ModelArchitecture {
  const encoder = r.family === "bert" || r.family === "mpnet";
  const attention: AttentionTraits = {
    implementations: r.family === "mpnet" ? ["eager"] : ["sdpa", "eager"],
    attentionDropout: r.attentionDropout ?? 0,
    hiddenDropout: r.hiddenDropout ?? 0,
    softmaxInFp32: !encoder,
    relativePositionBias: r.family === "mpnet",
  };
  return {
    family: r.family,
    type: encoder ? "encoder-embedding" : "decoder-llm",
    mlp: r.family === "gemma" ? "geglu" : encoder ? "gelu" : "swiglu",
    parameters: 0,
    largestLayerParameters: 0,
    layers: 3,
    hiddenSize: r.hidden,
    attentionHeads: r.heads,
    kvHeads: r.kvHeads ?? r.heads,
    headDim: r.hidden / r.heads,
    intermediateSize: r.intermediate,
    vocabSize: 512,
    tiedEmbeddings: false,
    attention,
    source: "calibration",
  };
}

const label = (r: Common & { attentionDropout?: number }) =>
  `${r.family} ${r.attention} dropout ${r.attentionDropout ?? "-"} h=${r.hidden} ${r.batch}x${r.seq}`;

describe(`attention terms vs measurements (torch ${data.torch}, transformers ${data.transformers})`, () => {
  it.each(data.training.map((r) => [label(r), r] as const))("training, saved bytes per layer and token: %s", (_, r) => {
    const m = arch(r);
    // The CPU's dropout keeps a noise tensor of the activation dtype where a GPU keeps a 1-byte mask.
    const predicted =
      layerBytesPerToken(m) +
      attentionTrainingBytesPerToken(m, r.attention, { seq: r.seq, bytesPerActivation: 2, device: "cpu" });
    const ratio = predicted / r.layerBytesPerToken;
    expect(ratio).toBeGreaterThanOrEqual(0.99);
    expect(ratio).toBeLessThanOrEqual(1.1);
  });

  it.each(data.inference.map((r) => [label(r), r] as const))("inference, peak live bytes: %s", (_, r) => {
    const m = arch(r);
    const measured = r.peakBytes;
    const predicted =
      r.batch * r.seq * forwardWorkingSetBytesPerToken(m) +
      attentionInferenceBytes(m, r.attention, { batch: r.batch, seq: r.seq, bytesPerActivation: 2 });
    expect(predicted).toBeGreaterThanOrEqual(measured);
    expect(predicted / measured).toBeLessThanOrEqual(1.6);
  });

  it("defaults: sdpa for catalog LLMs and BERT-style encoders, eager for MPNet (transformers has no SDPA path for it)", () => {
    expect(defaultAttention(catalogModel("meta-llama/Llama-3.1-8B")!)).toBe("sdpa");
    expect(defaultAttention(catalogModel("BAAI/bge-base-en-v1.5")!)).toBe("sdpa");
    expect(defaultAttention(catalogModel("sentence-transformers/all-mpnet-base-v2")!)).toBe("eager");
    expect(attentionTraits(catalogModel("BAAI/bge-base-en-v1.5")!).attentionDropout).toBe(0.1);
  });

  it("fused kernels keep no scores: the eager term grows with the sequence, the sdpa term does not", () => {
    const m = arch({
      family: "bert",
      attention: "eager",
      hidden: 768,
      intermediate: 3072,
      heads: 12,
      batch: 1,
      seq: 1,
    });
    const eager = (s: number) => attentionTrainingBytesPerToken(m, "eager", { seq: s, bytesPerActivation: 2 });
    expect(eager(1024) - eager(512)).toBe(12 * 512 * 2);
    expect(attentionTrainingBytesPerToken(m, "sdpa", { seq: 4096, bytesPerActivation: 2 })).toBe(
      attentionTrainingBytesPerToken(m, "flash", { seq: 64, bytesPerActivation: 2 }),
    );
  });
});

describe("what one layer's eager attention holds beyond its saved tensors (the step's peak)", () => {
  const llama = catalogModel("meta-llama/Llama-3.1-8B")!;
  const bert = catalogModel("BAAI/bge-large-en-v1.5")!;
  const perScore = (m: ModelArchitecture, impl: AttentionImplementation, over: object = {}) =>
    scoreTransientBytesPerToken(m, impl, { seq: 1024, bytesPerActivation: 2, ...over }) / (m.attentionHeads * 1024);

  it("holds three tensors of the softmax's dtype at its backward, less what the layer saved for the scores", () => {
    expect(perScore(llama, "eager")).toBe(3 * 4 - (4 + 2));
    // BERT-style 16-bit softmax: with its default dropout 0.1 the mask and the dropped copy are freed by then.
    expect(perScore(bert, "eager")).toBe(3 * 2 - (2 + 1 + 2));
    expect(perScore({ ...bert, attention: { ...attentionTraits(bert), attentionDropout: 0 } }, "eager")).toBe(
      3 * 2 - 2,
    );
  });

  it("keeps the fp32 dropped probabilities under autocast, whose 16-bit copy the next matmul saves", () => {
    // On a GPU the backward's three fp32 tensors, less 4 + 1 + 2 saved, are more; with PyTorch's CPU noise tensor
    // (4 bytes) saved instead of a 1-byte mask, the dropped probabilities are.
    expect(perScore(bert, "eager", { cudaAutocast: true })).toBe(3 * 4 - (4 + 1 + 2));
    expect(perScore(bert, "eager", { cudaAutocast: true, device: "cpu" })).toBe(4);
  });

  it("adds nothing to SDPA or FlashAttention", () => {
    expect(perScore(llama, "sdpa")).toBe(0);
    expect(perScore(llama, "flash")).toBe(0);
  });
});
