/**
 * The ways out when a training job does not fit, each planned again with the planner itself: the smallest GPU count
 * that fits (and with which ZeRO stage and offload), releasing the knobs the workload pinned, a fused attention
 * kernel, a quantized base (or, for a QLoRA job, its unquantized parameters in bf16, or the bf16 base that ZeRO-3 can
 * shard), the longest sequence that fits.
 * No advice repeats the current setting. Each way out keeps the workload's pinned knobs where it fits with them, else
 * names the pins it had to choose otherwise ("and leave microBatchSize to the planner"), so that applied as written it
 * plans as printed; where leaving the pins alone fits, no way out adds hardware or shortens the sequence on top of that.
 * When nothing fits on the job's GPU, the advice re-plans on each GPU of the catalog with more memory
 * (../catalog/accelerators.ts) and names the first that fits, or says that none does.
 */
import { ACCELERATOR_NAMES, ACCELERATORS } from "../catalog/accelerators";
import type { AttentionImplementation } from "../models/types";
import { attentionTraits, defaultAttention, type ScoreKernel, scoreKernel } from "./attention";
import type { MemoryEstimate } from "./estimate";
import { DEFAULT_LORA_DROPOUT, defaultLoraTargets, quantizable } from "./lora";
import { attentionChosenPerStep, searchKnobs, type SearchResult } from "./knob-search";
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

/** The knobs a workload may pin that the planner otherwise chooses. */
const PINNABLE = ["microBatchSize", "zeroStage", "offload", "gradientCheckpointing", "loss"] as const;

/** The request on `gpus`, its global batch kept where it still divides, DDP relaxed for LoRA (ZeRO may shard). */
function onGpus(r: TrainingRequest, gpus = r.gpus): TrainingRequest {
  const keepBatch = r.globalBatchSize !== undefined && r.globalBatchSize % gpus === 0;
  const globalBatchSize = keepBatch ? r.globalBatchSize : undefined;
  return { ...r, gpus, globalBatchSize, strategy: r.strategy === "ddp" && r.lora ? "auto" : r.strategy };
}

/** The request with every knob the planner may choose left to it. */
function released(r: TrainingRequest, gpus = r.gpus): TrainingRequest {
  return { ...onGpus(r, gpus), ...Object.fromEntries(PINNABLE.map((k) => [k, undefined])) };
}

const fitting = (r: TrainingRequest): SearchResult | undefined => {
  const s = searchKnobs(r);
  return s.found ? s : undefined;
};

const pinnedKnobs = (r: TrainingRequest): string[] => PINNABLE.filter((k) => r[k] !== undefined);

/** A way out as the workload would apply it: with its pins kept where that fits, else naming the pins it must drop. */
interface Replanned {
  readonly s: SearchResult;
  /** Pinned knobs the plan had to choose otherwise (the workload must leave them to the planner). */
  readonly freed: readonly string[];
}

/** The plan with the workload's pins left to the planner, where there are pins and it fits (searched once). */
const unpinnedPlans = new WeakMap<TrainingRequest, SearchResult | undefined>();
function unpinnedPlan(r: TrainingRequest): SearchResult | undefined {
  if (!unpinnedPlans.has(r)) unpinnedPlans.set(r, pinnedKnobs(r).length > 0 ? fitting(released(r)) : undefined);
  return unpinnedPlans.get(r);
}
const fitsUnpinned = (r: TrainingRequest): boolean => unpinnedPlan(r) !== undefined;

/**
 * `search` on the request with its pins kept; else with the pins released, naming those its result chose otherwise. A
 * way out that adds hardware or shortens the sequence is not offered with the pins released where releasing them alone
 * fits (`moreThanUnpinning`): that advice is the smaller change. One that changes how the job computes (attention,
 * quantization, ZeRO) still is: it may allow a larger micro-batch than releasing alone.
 */
function keptElseReleased<T extends { readonly s: SearchResult }>(
  r: TrainingRequest,
  gpus: number,
  search: (base: TrainingRequest) => T | undefined,
  moreThanUnpinning: boolean,
): (T & Replanned) | undefined {
  const kept = search(onGpus(r, gpus));
  if (kept) return { ...kept, freed: [] };
  if (pinnedKnobs(r).length === 0 || (moreThanUnpinning && fitsUnpinned(r))) return undefined;
  const found = search(released(r, gpus));
  return found && { ...found, freed: PINNABLE.filter((k) => r[k] !== undefined && r[k] !== found.s.c[k]) };
}

/** The request changed, planned with its pins kept, else released ({@link keptElseReleased}). */
function replanned(
  r: TrainingRequest,
  change: Partial<TrainingRequest>,
  moreThanUnpinning = false,
): Replanned | undefined {
  const search = (base: TrainingRequest) => {
    const s = fitting({ ...base, ...change });
    return s && { s };
  };
  return keptElseReleased(r, change.gpus ?? r.gpus, search, moreThanUnpinning);
}

/** "use X (settings: X of Y GiB)", and the pins to drop where the way out needs them chosen otherwise. */
function way(r: TrainingRequest, use: string, p: Replanned, why = ""): string {
  const freed = p.freed.length > 0 ? ` and leave ${p.freed.join(", ")} to the planner` : "";
  return `use ${use} (${why}${summary(p.s, r)})${freed}`;
}

function moreGpus(r: TrainingRequest): string | undefined {
  for (const gpus of ADVICE_GPU_COUNTS.filter((g) => g > r.gpus)) {
    const same = replanned(r, { gpus }, true);
    if (same) return way(r, `gpus: ${gpus}`, same);
    if (r.strategy === "ddp") {
      const zero = replanned(r, { gpus, strategy: "auto" }, true);
      if (zero) return way(r, `gpus: ${gpus} with strategy "auto"`, zero);
    }
  }
  return undefined;
}

function zeroInsteadOfDdp(r: TrainingRequest): string | undefined {
  if (r.strategy !== "ddp" || r.lora) return undefined;
  const p = replanned(r, { strategy: "auto" });
  return p && way(r, `strategy "auto" on the same ${r.gpus} GPUs`, p, "ZeRO shards the states; ");
}

/**
 * The implementation that keeps less than the current one's kernel, and why: a fused SDPA instead of eager, and eager's
 * 16-bit scores instead of SDPA's math kernel (Falcon-7B).
 */
const LEANER: {
  readonly [K in ScoreKernel]: { readonly use: AttentionImplementation; readonly why: string } | undefined;
} = {
  eager: { use: "sdpa", why: "no attention scores kept" },
  math: { use: "eager", why: "16-bit attention matmuls, where SDPA's math kernel multiplies and keeps scores in fp32" },
  fused: undefined,
};

function otherAttention(r: TrainingRequest): string | undefined {
  // Chosen per step, the attention planned is already the leaner of the two.
  if (attentionChosenPerStep(r)) return undefined;
  const t = attentionTraits(r.model);
  const leaner = LEANER[scoreKernel(t, r.attention ?? defaultAttention(r.model))];
  if (!leaner || !t.implementations.includes(leaner.use)) return undefined;
  if (leaner.use === "sdpa" && scoreKernel(t, "sdpa") !== "fused") return undefined;
  const p = replanned(r, { attention: leaner.use });
  return p && way(r, `attention: ${leaner.use}`, p, `${leaner.why}; `);
}

/** The pin that keeps QLoRA's unquantized parameters, and so the stream between its 4-bit layers, in 16 bit. */
const BF16_REST = "lora.unquantizedPrecision: bf16";

/** A quantized adapter setting that fits: as the runtime builds QLoRA by default, else with {@link BF16_REST}. */
function fittingQuantized(
  r: TrainingRequest,
  lora: NonNullable<TrainingRequest["lora"]>,
  change: Partial<TrainingRequest> = {},
): { p: Replanned; pin: string } | undefined {
  const p = replanned(r, { ...change, lora });
  if (p) return { p, pin: "" };
  if (lora.unquantizedPrecision === "bf16") return undefined;
  const bf16 = replanned(r, { ...change, lora: { ...lora, unquantizedPrecision: "bf16" } });
  return bf16 && { p: bf16, pin: ` with ${BF16_REST}` };
}

function quantized(r: TrainingRequest): string | undefined {
  if (r.model.type === "encoder-embedding" || !quantizable(r.model)) return undefined;
  if (!r.lora) {
    const targetModules = defaultLoraTargets(r.model);
    const lora = { rank: ADVICE_LORA_RANK, targetModules, quantization: "nf4", dropout: DEFAULT_LORA_DROPOUT } as const;
    const q = fittingQuantized(r, lora, { strategy: "auto" });
    const why = `QLoRA, rank ${lora.rank} on ${targetModules.join("/")}; `;
    return q && way(r, `a LoRAFineTune with lora.quantization: nf4${q.pin}`, q.p, why);
  }
  const next = r.lora.quantization === "none" ? "nf4" : r.lora.quantization === "nf4" ? "nf4-double" : undefined;
  if (!next) return undefined;
  const q = fittingQuantized(r, { ...r.lora, quantization: next });
  return q && way(r, `lora.quantization: ${next}${q.pin}`, q.p);
}

/** A QLoRA job that keeps PEFT's fp32 upcast: the same job with the unquantized parameters in bf16. */
function bf16Rest(r: TrainingRequest): string | undefined {
  if (!r.lora || r.lora.quantization === "none" || r.lora.unquantizedPrecision === "bf16") return undefined;
  const p = replanned(r, { lora: { ...r.lora, unquantizedPrecision: "bf16" } });
  const why =
    "the embeddings, norms and head PEFT upcasts to fp32 stay in bf16, and so does the stream between the 4-bit " +
    "layers; ";
  return p && way(r, BF16_REST, p, why);
}

/**
 * A QLoRA job that does not fit: the bf16 base with ZeRO-3 on the fewest GPUs where it fits. The planner keeps a 4-bit
 * base whole on every GPU (it tries ZeRO-3 for QLoRA only when pinned), so more GPUs alone never help it.
 */
function unquantizedSharded(r: TrainingRequest): string | undefined {
  if (!r.lora || r.lora.quantization === "none" || r.zeroStage !== undefined) return undefined;
  const lora = { ...r.lora, quantization: "none" as const };
  for (const gpus of ADVICE_GPU_COUNTS.filter((g) => g > r.gpus)) {
    const p = replanned(r, { gpus, lora, strategy: "auto" }, true);
    if (p) return way(r, `lora.quantization: none with gpus: ${gpus}`, p, "ZeRO-3 shards the bf16 base; ");
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
      const p = replanned(r, { gpus, usableGiB, gpuName: name }, true);
      if (p) return way({ ...r, usableGiB }, `a pool of ${name} GPUs with gpus: ${gpus}`, p);
    }
  }
  return undefined;
}

/** The longest sequence, in steps of {@link MIN_ADVICE_SEQUENCE}, that fits with the pins kept, else released. */
function shorterSequence(r: TrainingRequest): string | undefined {
  const longest = (base: TrainingRequest) => {
    const at = (sequenceLength: number) => fitting({ ...base, sequenceLength });
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
    return { sequenceLength: lo, s: best };
  };
  const found = keptElseReleased(r, r.gpus, longest, true);
  return found && way(r, `sequenceLength: ${found.sequenceLength}, the longest that fits`, found);
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
  const unpinned = unpinnedPlan(r);
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
