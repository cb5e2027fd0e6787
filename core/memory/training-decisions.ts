/** The reasons a training plan gives for each knob it chose. */
import { DecisionLog, type Decision } from "../decisions";
import { attentionTraits, defaultAttention, type ScoreKernel, scoreKernel } from "./attention";
import type { MemoryEstimate } from "./estimate";
import { hasCausalLmLoss, LOSS_CHUNK_TOKENS } from "./loss";
import { DEFAULT_OPTIMIZER_STEP, type OptimizerStep } from "./buffers";
import { attentionChosenPerStep, unquantizedOf } from "./knob-search";
import type { UnquantizedPrecision } from "./model-states";
import { SAFETY_MARGIN, type TrainingKnobs, type TrainingRequest } from "./training-request";

/** What each optimizer step implementation costs, as the plan says it. */
const STEP_REASONS: { readonly [S in OptimizerStep]: string } = {
  fused: "fused kernel (fused=True), no temporaries during the step",
  foreach: "foreach=True keeps one temporary the size of the stepped parameters during the step, counted",
  "for-loop": "foreach=False keeps the largest tensor's square root and quotient during the step, counted",
};

const pinned = (v: unknown) => v !== undefined;

/**
 * Parameters of the largest model a sharded 4-bit base is checked at: Yi-34B's 34,388,917,248, whose FSDP run in
 * Answer.AI's benchmark note plans at 0.98 of its reserved peak (docs/memory.md, "QLoRA across GPUs").
 */
const SHARDED_QLORA_CHECKED_PARAMETERS = 34_388_917_248;

/** What the plan of a larger sharded QLoRA cannot vouch for, and what to do (docs/memory.md, "QLoRA across GPUs"). */
function shardedQloraCaveat(r: TrainingRequest, k: TrainingKnobs): string {
  const quantized = r.lora !== undefined && r.lora.quantization !== "none";
  if (!quantized || k.zeroStage !== 3 || r.model.parameters <= SHARDED_QLORA_CHECKED_PARAMETERS) return "";
  return (
    "; a sharded 4-bit base is checked against measured peaks only up to 34B parameters, and PEFT's Llama-2-70B " +
    "runs reported up to 4.6 GiB per GPU more than such a plan requires: run it once at a small micro-batch and read " +
    "its peak with ray-gpu report before trusting it near the limit"
  );
}

/** Where nothing fits, the knobs shown are the leanest plan's: what its reasons say instead of "fits". */
const nothingFits = (r: TrainingRequest) =>
  `nothing fits on ${r.gpus} GPU${r.gpus === 1 ? "" : "s"}, so this is the leanest plan's (see the advice)`;

function stageReason(r: TrainingRequest, k: TrainingKnobs, mem: MemoryEstimate): string {
  const states = mem.breakdownGiB.modelStates;
  if (pinned(r.zeroStage)) return `pinned by the workload${shardedQloraCaveat(r, k)}`;
  if (!mem.fits) return `${nothingFits(r)}: model states of ${states} GiB per GPU`;
  if (k.zeroStage === 0) return `plain DDP: full model states (${states} GiB) fit on each GPU`;
  return (
    `ZeRO-${k.zeroStage}: the lowest stage whose per-GPU model states (${states} GiB, plus ` +
    `${mem.breakdownGiB.communicationBuffers} GiB of communication buffers) leave room for activations`
  );
}

function offloadReason(r: TrainingRequest, k: TrainingKnobs, mem: MemoryEstimate): string {
  if (pinned(r.offload)) return "pinned by the workload";
  if (k.offload !== "none")
    return `offload to CPU needed; the node must hold ${mem.cpuOffloadGiBPerNode} GiB (DeepSpeed's estimate)`;
  return mem.fits ? "no offload: the states fit on the GPUs" : `no offload: ${nothingFits(r)}`;
}

function decideStages(log: DecisionLog, r: TrainingRequest, k: TrainingKnobs, mem: MemoryEstimate): void {
  log.decide("zeroStage", k.zeroStage, stageReason(r, k, mem));
  log.decide("offload", k.offload, offloadReason(r, k, mem));
  log.decide(
    "gradientCheckpointing",
    k.gradientCheckpointing,
    pinned(r.gradientCheckpointing)
      ? "pinned by the workload"
      : k.gradientCheckpointing
        ? "needed: without it even micro-batch 1 does not fit; recomputation keeps only each layer's input"
        : "not needed: activations fit, so no recomputation cost",
  );
}

/** Why QLoRA's unquantized parameters train in what they do (model-states.ts `unquantizedPrecisionOf`). */
function unquantizedReason(r: TrainingRequest, k: TrainingKnobs, value: UnquantizedPrecision): string {
  const stream = "the stream between the 4-bit layers";
  if (value === "fp32") {
    const source = pinned(r.lora?.unquantizedPrecision)
      ? "pinned by the workload"
      : "the runtime's (PEFT's prepare_model_for_kbit_training)";
    return (
      `${source}: the embeddings, norms and head are upcast to fp32 and ${stream} runs in fp32, counted in the ` +
      "weights and activations; lora.unquantizedPrecision: bf16 keeps them in 16 bit"
    );
  }
  if (k.zeroStage > 0)
    return `DeepSpeed's 16-bit engine (ZeRO-${k.zeroStage}) casts the embeddings, norms and head to 16 bit, so ${stream} stays 16-bit`;
  return `pinned by the workload: the runtime casts the embeddings, norms and head PEFT upcasts back to bf16, so ${stream} stays 16-bit`;
}

/** What QLoRA's unquantized parameters train in, with its reason; nothing for a base that is not quantized. */
function decideUnquantized(log: DecisionLog, r: TrainingRequest, k: TrainingKnobs): void {
  if (!r.lora || r.lora.quantization === "none") return;
  const value = unquantizedOf(r, k);
  log.decide("lora.unquantizedPrecision", value, unquantizedReason(r, k, value));
}

/** What each score kernel keeps, as the attention reason says it. */
const KERNEL_REASON: { readonly [K in ScoreKernel]: (dropout: string) => string } = {
  eager: (dropout) =>
    `: eager keeps every attention score${dropout} for backward, and one layer's softmax gradients while it runs, ` +
    "counted in the activations",
  math: () =>
    ": one key/value head reaches SDPA unexpanded, so PyTorch runs its math kernel, which keeps every attention score " +
    "in fp32 for backward, and one layer's fp32 softmax gradients while it runs, counted in the activations",
  fused: () => ": fused kernel, no attention scores kept",
};

/**
 * Why the attention no workload pinned is the one planned: the model's default, or, where SDPA is PyTorch's math kernel,
 * the leaner of it and eager for this step (./knob-search.ts `searchKnobs`).
 */
function unpinnedAttention(r: TrainingRequest): string {
  const traits = attentionTraits(r.model);
  if (attentionChosenPerStep(r))
    return (
      "the planner's choice: of eager and SDPA (PyTorch's math kernel for this model: fp32 scores and matmuls), the " +
      "one this step needs less memory for, eager on a tie (it multiplies in 16 bit)"
    );
  const only = traits.implementations.length === 1 ? ", the only one transformers has for it" : "";
  return `the model's default (${defaultAttention(r.model)}${only})`;
}

function decideKernels(log: DecisionLog, r: TrainingRequest, k: TrainingKnobs, mem: MemoryEstimate): void {
  const traits = attentionTraits(r.model);
  const dropout = traits.attentionDropout > 0 ? ` and attention dropout ${traits.attentionDropout}` : "";
  log.decide(
    "attentionImplementation",
    k.attentionImplementation,
    (pinned(r.attention) ? "pinned by the workload" : unpinnedAttention(r)) +
      KERNEL_REASON[scoreKernel(traits, k.attentionImplementation)](dropout),
  );
  log.decide(
    "optimizerStep",
    k.optimizerStep,
    `${pinned(r.optimizerStep) && r.optimizerStep !== DEFAULT_OPTIMIZER_STEP ? "pinned by the workload" : "the runtime's"}` +
      `: ${STEP_REASONS[k.optimizerStep]}`,
  );
  if (!hasCausalLmLoss(r.model)) return;
  log.decide(
    "loss",
    k.loss,
    pinned(r.loss)
      ? `pinned by the workload; logits take ${mem.breakdownGiB.logits} GiB`
      : k.loss === "chunked"
        ? `chunked: scoring ${LOSS_CHUNK_TOKENS} tokens at a time keeps logits at ${mem.breakdownGiB.logits} GiB, which ` +
          `allows this micro-batch, stage or checkpointing choice; the full loss does not`
        : `full: chunking (${LOSS_CHUNK_TOKENS} tokens at a time) would not allow a larger micro-batch, a lower ZeRO ` +
          `stage or less recomputation; logits take ${mem.breakdownGiB.logits} GiB`,
  );
}

/** The plan's decisions, in the order a reader follows them. */
export function trainingDecisions(
  r: TrainingRequest,
  k: TrainingKnobs,
  mem: MemoryEstimate,
  found: boolean,
): readonly Decision[] {
  const log = new DecisionLog();
  const target = r.usableGiB * (1 - SAFETY_MARGIN);
  const req =
    `requires ${mem.requiredGiB} GiB of ${r.usableGiB} GiB (target ${target.toFixed(2)} GiB with a ` +
    `${SAFETY_MARGIN * 100}% margin)`;
  decideStages(log, r, k, mem);
  decideUnquantized(log, r, k);
  decideKernels(log, r, k, mem);
  log.decide(
    "microBatchSize",
    k.microBatchSize,
    pinned(r.microBatchSize)
      ? `pinned by the workload; ${req}`
      : mem.fits
        ? `largest that fits: ${req}`
        : `the smallest, and it does not fit: ${req}`,
  );
  log.decide(
    "gradientAccumulationSteps",
    k.gradientAccumulationSteps,
    r.globalBatchSize !== undefined
      ? `global batch ${r.globalBatchSize} = ${k.microBatchSize} micro-batch x ${k.gradientAccumulationSteps} steps x ` +
          `${r.gpus} GPUs, kept exactly whatever the GPU count` +
          (k.gradientAccumulationSteps > 1
            ? `; the earlier micro-batches' gradients (${mem.breakdownGiB.gradients} GiB) are held ` +
              "through the later ones, which the plan counts"
            : "")
      : "no globalBatchSize given: one micro-batch per step",
  );
  if (!found && mem.fits)
    log.decide(
      "safetyMargin",
      false,
      `no choice stays under the ${SAFETY_MARGIN * 100}% planning margin; the closest (${mem.requiredGiB} ` +
        `GiB) still fits the ${r.usableGiB} GiB, with little room for allocator fragmentation`,
    );
  return log.decisions;
}
