/**
 * Per-GPU memory estimates: the predicted peak of `torch.cuda.max_memory_allocated()` and what must fit on the
 * device once the CUDA/NCCL context and allocator headroom are added. Bytes inside, GiB (2^30) outside.
 */
import { GIB, round3 } from "../quantity";
import type { AttentionImplementation, ModelArchitecture } from "../models/types";
import {
  type ActivationStep,
  headBytesPerToken,
  layerBytesPerToken,
  type LoraActivationInput,
  runsFp32Stream,
  streamBytesPerHidden,
  upcastStream,
} from "./activations";
import {
  type AttentionInput,
  attentionTrainingBytesPerToken,
  type DropoutDevice,
  scoreTransientBytesPerToken,
} from "./attention";
import { hasVocabularyLogits, logitsBytes, type LossImplementation } from "./loss";
import type { ModelStates, Precision } from "./model-states";

/**
 * Memory outside the caching allocator's peak. CUDA context with lazy module loading: ~300–500 MiB per process
 * (pytorch/pytorch#109888, #86509); NCCL communicator buffers when several GPUs talk (NVIDIA/nccl `DEFAULT_BUFFSIZE`
 * 4 MiB per channel, tens to hundreds of MiB in practice); and allocator headroom for fragmentation between
 * `max_memory_allocated` and `max_memory_reserved`, kept small by `expandable_segments:True`. The headroom is a share
 * of the memory allocated and freed within each step (activations, logits, gradients, buffers, temporaries), not of
 * the weights and optimizer states, which are allocated once at load and never freed, so they leave no gaps.
 */
export const FRAMEWORK = { cudaContextGiB: 0.5, ncclGiB: 0.25, allocatorHeadroomFraction: 0.05 } as const;

/** GiB per component; zeros where a component does not apply. */
export interface MemoryBreakdownGiB {
  readonly weights: number;
  readonly gradients: number;
  readonly optimizerStates: number;
  /** weights + gradients + optimizer states, exactly as DeepSpeed's estimators count model states. */
  readonly modelStates: number;
  /** DDP gradient buckets, ZeRO's double-buffered reduce buckets and ZeRO-3's gathered parameters. */
  readonly communicationBuffers: number;
  readonly activations: number;
  readonly logits: number;
  readonly kvCache: number;
  readonly framework: number;
}

/** A memory estimate for one GPU. */
export interface MemoryEstimate {
  /** Predicted peak of `torch.cuda.max_memory_allocated()`, GiB. */
  readonly allocatedPeakGiB: number;
  /** Allocated peak plus CUDA/NCCL context and allocator headroom (a share of the step's transient memory), GiB. */
  readonly requiredGiB: number;
  readonly usableGiB: number;
  readonly fits: boolean;
  readonly breakdownGiB: MemoryBreakdownGiB;
  /** Host memory per node that offloading needs (DeepSpeed's estimate), GiB; 0 without offload. */
  readonly cpuOffloadGiBPerNode: number;
}

/** Bytes per component, before rounding to GiB. */
export type MemoryParts = Omit<MemoryBreakdownGiB, "framework" | "modelStates"> & { readonly peakBytes: number };

/** Rounds the parts to GiB and adds the framework memory around the allocator's peak. */
export function finishEstimate(parts: MemoryParts, gpus: number, usableGiB: number, cpuBytes: number): MemoryEstimate {
  const allocated = parts.peakBytes / GIB;
  const transient = (parts.peakBytes - parts.weights - parts.optimizerStates) / GIB;
  const framework =
    FRAMEWORK.cudaContextGiB + (gpus > 1 ? FRAMEWORK.ncclGiB : 0) + FRAMEWORK.allocatorHeadroomFraction * transient;
  const required = allocated + framework;
  const b = (x: number) => round3(x / GIB);
  return {
    allocatedPeakGiB: round3(allocated),
    requiredGiB: round3(required),
    usableGiB: usableGiB,
    fits: required <= usableGiB,
    breakdownGiB: {
      weights: b(parts.weights),
      gradients: b(parts.gradients),
      optimizerStates: b(parts.optimizerStates),
      modelStates: b(parts.weights + parts.gradients + parts.optimizerStates),
      communicationBuffers: b(parts.communicationBuffers),
      activations: b(parts.activations),
      logits: b(parts.logits),
      kvCache: b(parts.kvCache),
      framework: round3(framework),
    },
    cpuOffloadGiBPerNode: round3(cpuBytes / GIB),
  };
}

/** Input of {@link estimateTraining}. */
export interface TrainingMemoryInput {
  readonly model: ModelArchitecture;
  readonly states: ModelStates;
  readonly precision: Precision;
  readonly microBatchSize: number;
  /** LLM tokens per sample, image tokens included. */
  readonly tokensPerSample: number;
  readonly gradientCheckpointing: boolean;
  readonly attention: AttentionImplementation;
  readonly loss: LossImplementation;
  readonly lora?: LoraActivationInput;
  /**
   * The step runs under CUDA's autocast over the weights as loaded: mixed precision on plain DDP (./autocast.ts).
   * @default false
   */
  readonly cudaAutocast?: boolean;
  readonly gpus: number;
  /** DDP gradient buckets, ZeRO reduce buckets and ZeRO-3 gathered parameters, bytes. */
  readonly communicationBytes: number;
  /** Bytes the optimizer step allocates beside its states (see {@link optimizerStepTemporaryBytes}). */
  readonly stepTemporaryBytes: number;
  /**
   * Gradient accumulation, which holds the gradients of a step's earlier micro-batches through the next one's forward
   * and backward. Plain DDP sums them in `param.grad` under `no_sync()` and frees them after the optimizer step
   * (ray_gpu/examples/loop.py), and its backward makes each new gradient beside the held one before adding it in place
   * (`AccumulateGrad`): `largestGradientBytes` is the largest trainable tensor's gradient. DeepSpeed's ZeRO sums each
   * micro-batch's reduced partition into `averaged_gradients` at the end of its backward
   * (`independent_gradient_partition_epilogue` in `stage_1_and_2.py`) and frees them at the step; it reduces new
   * gradients through its buckets, counted in the communication buffers (`largestGradientBytes` 0).
   * @default undefined (one micro-batch per step: no gradients held)
   */
  readonly accumulation?: { readonly largestGradientBytes: number };
  /** Forward working set of a frozen vision tower, bytes. */
  readonly visionBytes?: number;
  /**
   * The 16-bit copy of a QLoRA weight that backward dequantizes to compute its input's gradient, bytes: the largest
   * quantized linear layer, one at a time (bitsandbytes `MatMul4Bit.backward`: `F.dequantize_4bit(B, ctx.state)`;
   * releases before 0.50 dequantize in the forward pass as well). 0 without QLoRA.
   */
  readonly dequantizedWeightBytes?: number;
  readonly usableGiB: number;
}

/** Transformer layers whose activations a step keeps: the encoder's (or decoder-only model's) and a decoder's. */
const layerCount = (m: Pick<ModelArchitecture, "layers" | "decoderLayers">): number =>
  m.layers + (m.decoderLayers ?? 0);

/**
 * Bytes saved for backward by one micro-batch: every layer (or, with checkpointing, each layer's input plus one layer),
 * the head, and in a QLoRA fp32 stream the LM head's bf16 copy; and what one layer's attention holds for its scores
 * beyond them while it runs, eager or SDPA's math kernel (./attention.ts {@link scoreTransientBytesPerToken}).
 */
export function activationBytes(
  t: Pick<
    TrainingMemoryInput,
    | "model"
    | "precision"
    | "microBatchSize"
    | "tokensPerSample"
    | "gradientCheckpointing"
    | "attention"
    | "lora"
    | "cudaAutocast"
  >,
  device: DropoutDevice = "gpu",
): number {
  const m = t.model;
  const step = activationStep(t, device);
  const tokens = t.microBatchSize * t.tokensPerSample;
  const input: AttentionInput = {
    seq: t.tokensPerSample,
    bytesPerActivation: step.bytesPerActivation,
    device,
    cudaAutocast: step.cudaAutocast,
    fp32Stream: runsFp32Stream(m, step),
    microBatchSize: t.microBatchSize,
    checkpointing: t.gradientCheckpointing,
    frozenBase: t.lora !== undefined,
  };
  const attention = attentionTrainingBytesPerToken(m, t.attention, input);
  const transient = scoreTransientBytesPerToken(m, t.attention, input);
  const perLayer = layerBytesPerToken(m, step) + attention;
  // With checkpointing, one layer's activations exist at a time, while it is recomputed.
  const layerActivations = t.gradientCheckpointing ? perLayer : layerCount(m) * perLayer;
  const checkpoints = t.gradientCheckpointing ? checkpointInputBytes(m, step, tokens) : 0;
  const perToken = layerActivations + headBytesPerToken(m, step) + transient;
  return checkpoints + tokens * perToken + upcastHeadCopyBytes(m, t.lora);
}

/** The activation model's reading of a step: its adapters, activation bytes, dropout device, autocast and batch. */
function activationStep(
  t: Pick<TrainingMemoryInput, "precision" | "lora" | "cudaAutocast" | "microBatchSize">,
  device: DropoutDevice,
): ActivationStep & Required<Omit<ActivationStep, "lora">> {
  return {
    lora: t.lora,
    bytesPerActivation: t.precision === "fp32" ? 4 : 2,
    device,
    cudaAutocast: t.cudaAutocast ?? false,
    microBatchSize: t.microBatchSize,
  };
}

/**
 * What full recomputation keeps of `tokens` tokens: each layer's input, in the residual stream's dtype: the
 * activations' bytes per element, or 4 where the stream runs in fp32 (full training under CUDA's autocast, QLoRA with
 * PEFT's upcast: fms-acceleration's QLoRA runs with and without the upcast differ by exactly this, docs/memory.md).
 */
export function checkpointInputBytes(m: ModelArchitecture, step: ActivationStep, tokens: number): number {
  return tokens * layerCount(m) * m.hiddenSize * streamBytesPerHidden(m, step);
}

/**
 * The bf16 copy of an fp32 LM head that autocast makes for its matmul and saves for backward (the head is frozen, so
 * the copy is not cached and the input's gradient needs it): 2 bytes per head weight, once per micro-batch, in an fp32
 * stream (measured, calibration/kbit_standin.py). 0 otherwise, and for models without vocabulary logits.
 */
export function upcastHeadCopyBytes(m: ModelArchitecture, lora: LoraActivationInput | undefined): number {
  return upcastStream(lora) && hasVocabularyLogits(m) ? 2 * m.vocabSize * m.hiddenSize : 0;
}

/**
 * Training peak. Activations and logits peak at the start of backward, before gradients exist (they are set to
 * None between steps); gradients and the optimizer's temporaries peak at the step, after activations are freed:
 * peak = weights + optimizer states + buffers + max(activations + logits, gradients + step temporaries).
 * Where the gradients are held across micro-batches (accumulating), they are there at both peaks, and on plain DDP
 * backward adds each new one to them: peak = weights + optimizer states + buffers + gradients +
 * max(activations + logits + the largest tensor's gradient, step temporaries).
 */
export function estimateTraining(t: TrainingMemoryInput): MemoryEstimate {
  const m = t.model;
  const activations = activationBytes(t) + (t.visionBytes ?? 0) + (t.dequantizedWeightBytes ?? 0);
  const logits = hasVocabularyLogits(m) ? logitsBytes(m, t.microBatchSize * t.tokensPerSample, t.loss) : 0;
  const held = t.accumulation === undefined ? 0 : t.states.gradients;
  const adding = t.accumulation?.largestGradientBytes ?? 0;
  const peak =
    t.states.weights +
    t.states.optimizerStates +
    t.communicationBytes +
    held +
    Math.max(activations + logits + adding, t.states.gradients - held + t.stepTemporaryBytes);
  return finishEstimate(
    {
      weights: t.states.weights,
      gradients: t.states.gradients,
      optimizerStates: t.states.optimizerStates,
      communicationBuffers: t.communicationBytes,
      activations,
      logits,
      kvCache: 0,
      peakBytes: peak,
    },
    t.gpus,
    t.usableGiB,
    t.states.cpuBytesPerNode,
  );
}
