/**
 * The ways out when a training job does not fit, each planned again with the planner itself: the smallest GPU count
 * that fits (and with which ZeRO stage and offload), releasing the knobs the workload pinned, a fused attention
 * kernel, a quantized base (or, for a QLoRA job, its unquantized parameters in bf16, or the bf16 base that ZeRO-3 can
 * shard), the longest sequence that fits.
 * No advice repeats the current setting. When nothing fits on the job's GPU, the advice re-plans on each GPU of the
 * catalog with more memory (../catalog/accelerators.ts) and names the first that fits, or says that none does.
 */
import { ACCELERATOR_NAMES, ACCELERATORS } from "../catalog/accelerators";
import type { AttentionImplementation } from "../models/types";
import { attentionTraits, defaultAttention, type ScoreKernel, scoreKernel } from "./attention";
import type { MemoryEstimate } from "./estimate";
import { DEFAULT_LORA_DROPOUT, defaultLoraTargets, quantizable } from "./lora";
import { searchKnobs, type SearchResult } from "./knob-search";
import type { TrainingRequest } from "./training-request";

/** GPU counts the advice tries; 64 is eight g5.48xlarge, the most one Ray job is planned for. */
export const ADVICE_GPU_COUNTS = [2, 4, 8, 16, 32, 64] as const;
/** Shortest sequence the advice offers. */
export const MIN_ADVICE_SEQUENCE = 64;
/** Rank of the QLoRA adapter offered to a full fine-tune that does not fit. */
const ADVICE_LORA_RANK = 16;

/** "ZeRO-3, optimizer offload, checkpointing, chunked loss, micro-batch 2: 19.8 of 21.99 GiB". */
function summary(s: SearchResult, r: TrainingRequest): string {
  const parts = [s.c.zeroStage === 0 ? "plain DDP" : `ZeRO-${s.c.zeroStage}`];
  if (s.c.offload !== "none") parts.push(`${s.c.offload} offload`);
  if (s.c.gradientCheckpointing) parts.push("checkpointing");
  if (s.c.loss === "chunked") parts.push("chunked loss");
  parts.push(`micro-batch ${s.c.microBatchSize}`);
  return `${parts.join(", ")}: ${s.mem.requiredGiB} of ${r.usableGiB} GiB`;
}

/** The request with every knob the planner may choose left to it (the global batch kept when it still divides). */
function released(r: TrainingRequest, gpus = r.gpus): TrainingRequest {
  const keepBatch = r.globalBatchSize !== undefined && r.globalBatchSize % gpus === 0;
  return {
    ...r,
    gpus,
    globalBatchSize: keepBatch ? r.globalBatchSize : undefined,
    microBatchSize: undefined,
    zeroStage: undefined,
    offload: undefined,
    gradientCheckpointing: undefined,
    loss: undefined,
    strategy: r.strategy === "ddp" && r.lora ? "auto" : r.strategy,
  };
}

const fitting = (r: TrainingRequest): SearchResult | undefined => {
  const s = searchKnobs(r);
  return s.found ? s : undefined;
};

function pinnedKnobs(r: TrainingRequest): string[] {
  const keys = ["microBatchSize", "zeroStage", "offload", "gradientCheckpointing", "loss"] as const;
  return keys.filter((k) => r[k] !== undefined);
}

function moreGpus(r: TrainingRequest): string | undefined {
  for (const gpus of ADVICE_GPU_COUNTS.filter((g) => g > r.gpus)) {
    const same = fitting(released(r, gpus));
    if (same) return `use gpus: ${gpus} (${summary(same, r)})`;
    if (r.strategy === "ddp") {
      const zero = fitting({ ...released(r, gpus), strategy: "auto" });
      if (zero) return `use gpus: ${gpus} with strategy "auto" (${summary(zero, r)})`;
    }
  }
  return undefined;
}

function zeroInsteadOfDdp(r: TrainingRequest): string | undefined {
  if (r.strategy !== "ddp" || r.lora) return undefined;
  const s = fitting({ ...released(r), strategy: "auto" });
  return s && `use strategy "auto" on the same ${r.gpus} GPUs (ZeRO shards the states; ${summary(s, r)})`;
}

/**
 * The implementation that keeps less than the current one's kernel, and why: a fused SDPA instead of eager, and eager's
 * 16-bit scores instead of SDPA's math kernel (Falcon-7B).
 */
const LEANER: {
  readonly [K in ScoreKernel]: { readonly use: AttentionImplementation; readonly why: string } | undefined;
} = {
  eager: { use: "sdpa", why: "no attention scores kept" },
  math: { use: "eager", why: "16-bit attention scores, where SDPA's math kernel keeps fp32 ones" },
  fused: undefined,
};

function otherAttention(r: TrainingRequest): string | undefined {
  const t = attentionTraits(r.model);
  const leaner = LEANER[scoreKernel(t, r.attention ?? defaultAttention(r.model))];
  if (!leaner || !t.implementations.includes(leaner.use)) return undefined;
  if (leaner.use === "sdpa" && scoreKernel(t, "sdpa") !== "fused") return undefined;
  const s = fitting({ ...released(r), attention: leaner.use });
  return s && `use attention: ${leaner.use} (${leaner.why}; ${summary(s, r)})`;
}

/** The pin that keeps QLoRA's unquantized parameters, and so the stream between its 4-bit layers, in 16 bit. */
const BF16_REST = "lora.unquantizedPrecision: bf16";

/** A quantized adapter setting that fits: as the runtime builds QLoRA by default, else with {@link BF16_REST}. */
function fittingQuantized(
  r: TrainingRequest,
  lora: NonNullable<TrainingRequest["lora"]>,
): { s: SearchResult; pin: string } | undefined {
  const s = fitting({ ...r, lora });
  if (s) return { s, pin: "" };
  if (lora.unquantizedPrecision === "bf16") return undefined;
  const bf16 = fitting({ ...r, lora: { ...lora, unquantizedPrecision: "bf16" } });
  return bf16 && { s: bf16, pin: ` with ${BF16_REST}` };
}

function quantized(r: TrainingRequest): string | undefined {
  if (r.model.type === "encoder-embedding" || !quantizable(r.model)) return undefined;
  if (!r.lora) {
    const targetModules = defaultLoraTargets(r.model);
    const lora = { rank: ADVICE_LORA_RANK, targetModules, quantization: "nf4", dropout: DEFAULT_LORA_DROPOUT } as const;
    const q = fittingQuantized({ ...released(r), strategy: "auto" }, lora);
    const on = targetModules.join("/");
    return (
      q &&
      `use a LoRAFineTune with lora.quantization: nf4${q.pin} (QLoRA, rank ${lora.rank} on ${on}; ${summary(q.s, r)})`
    );
  }
  const next = r.lora.quantization === "none" ? "nf4" : r.lora.quantization === "nf4" ? "nf4-double" : undefined;
  if (!next) return undefined;
  const q = fittingQuantized(released(r), { ...r.lora, quantization: next });
  return q && `use lora.quantization: ${next}${q.pin} (${summary(q.s, r)})`;
}

/** A QLoRA job that keeps PEFT's fp32 upcast: the same job with the unquantized parameters in bf16. */
function bf16Rest(r: TrainingRequest): string | undefined {
  if (!r.lora || r.lora.quantization === "none" || r.lora.unquantizedPrecision === "bf16") return undefined;
  const s = fitting({ ...released(r), lora: { ...r.lora, unquantizedPrecision: "bf16" } });
  return (
    s &&
    `use ${BF16_REST} (the embeddings, norms and head PEFT upcasts to fp32 stay in bf16, and so does the stream ` +
      `between the 4-bit layers; ${summary(s, r)})`
  );
}

/**
 * A QLoRA job that does not fit: the bf16 base with ZeRO-3 on the fewest GPUs where it fits. The planner keeps a 4-bit
 * base whole on every GPU (it tries ZeRO-3 for QLoRA only when pinned), so more GPUs alone never help it.
 */
function unquantizedSharded(r: TrainingRequest): string | undefined {
  if (!r.lora || r.lora.quantization === "none" || r.zeroStage !== undefined) return undefined;
  const lora = { ...r.lora, quantization: "none" as const };
  for (const gpus of ADVICE_GPU_COUNTS.filter((g) => g > r.gpus)) {
    const s = fitting({ ...released(r, gpus), lora, strategy: "auto" });
    if (s) return `use lora.quantization: none with gpus: ${gpus} (ZeRO-3 shards the bf16 base; ${summary(s, r)})`;
  }
  return undefined;
}

/** The first GPU of the catalog with more memory on which the job fits as asked, or with more of them. */
function largerGpu(r: TrainingRequest): string | undefined {
  const larger = ACCELERATOR_NAMES.filter((n) => ACCELERATORS[n].cudaTotalGiB > r.usableGiB).sort(
    (a, b) => ACCELERATORS[a].cudaTotalGiB - ACCELERATORS[b].cudaTotalGiB,
  );
  for (const name of larger) {
    const usableGiB = ACCELERATORS[name].cudaTotalGiB;
    for (const gpus of [r.gpus, ...ADVICE_GPU_COUNTS.filter((g) => g > r.gpus)]) {
      const on = { ...released(r, gpus), usableGiB, gpuName: name };
      const s = fitting(on);
      if (s) return `use a pool of ${name} GPUs with gpus: ${gpus} (${summary(s, on)})`;
    }
  }
  return undefined;
}

function shorterSequence(r: TrainingRequest): string | undefined {
  const at = (sequenceLength: number) => fitting({ ...released(r), sequenceLength });
  let lo = MIN_ADVICE_SEQUENCE;
  let hi = Math.floor((r.sequenceLength - 1) / MIN_ADVICE_SEQUENCE) * MIN_ADVICE_SEQUENCE;
  let best = hi < lo ? undefined : at(lo);
  if (!best) return undefined;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2 / MIN_ADVICE_SEQUENCE) * MIN_ADVICE_SEQUENCE;
    const s = at(mid);
    if (s) [lo, best] = [mid, s];
    else hi = mid - MIN_ADVICE_SEQUENCE;
  }
  return `use sequenceLength: ${lo}, the longest that fits (${summary(best, r)})`;
}

/** Every way out that fits, re-planned; or that nothing on any GPU of the catalog does. */
export function replannedAdvice(r: TrainingRequest, mem: MemoryEstimate): string[] {
  const b = mem.breakdownGiB;
  const gpu = r.gpuName ?? "GPU";
  const out = [
    `does not fit: needs ${mem.requiredGiB} GiB per GPU (model states ${b.modelStates} GiB, buffers ` +
      `${b.communicationBuffers} GiB, activations ${b.activations} GiB, logits ${b.logits} GiB) but each ${gpu} ` +
      `offers ${r.usableGiB} GiB`,
  ];
  const pins = pinnedKnobs(r);
  const unpinned = pins.length > 0 ? fitting(released(r)) : undefined;
  if (unpinned) out.push(`leave ${pins.join(", ")} to the planner (${summary(unpinned, r)})`);
  const ways = [zeroInsteadOfDdp(r), bf16Rest(r), moreGpus(r), unquantizedSharded(r), otherAttention(r), quantized(r)];
  out.push(...[...ways, shorterSequence(r)].filter((w) => w !== undefined));
  if (out.length > 1) return out;
  const elsewhere = largerGpu(r);
  const tried =
    `nothing fits on the ${gpu} (${r.usableGiB} GiB): tried up to ${ADVICE_GPU_COUNTS.at(-1)} GPUs with ZeRO-3 ` +
    `and CPU offload, QLoRA and sequences down to ${MIN_ADVICE_SEQUENCE} tokens`;
  out.push(elsewhere ? `${tried}; ${elsewhere}` : `${tried}, and on no GPU of the catalog; use a smaller model`);
  return out;
}
