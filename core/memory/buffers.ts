/**
 * Memory beside the model states: communication buffers and the optimizer step's temporaries.
 *
 * - Plain DDP keeps gradient buckets as large as the gradients (`gradient_as_bucket_view` off, PyTorch's default).
 * - ZeRO 1-3 with `overlap_comm` double-buffer the reduce bucket: 2 × {@link DEEPSPEED_BUCKET_ELEMENTS} 16-bit
 *   elements, or fewer when fewer parameters train (LoRA).
 * - ZeRO-3 gathers 16-bit parameters before each module runs and frees them after, keeping at most
 *   `stage3_max_live_parameters` alive (deepspeed `partitioned_param_coordinator.py`: prefetch is capped by
 *   `max_n_available_params - n_available_params`; `__params_to_release` keeps parameters reused within
 *   `stage3_max_reuse_distance`). DeepSpeed's defaults (1e9 each) would keep a whole sub-1e9 model gathered, so the
 *   rendered config sets both to {@link ZERO3_MAX_LIVE_PARAMETERS}; a module larger than that is gathered whole.
 *   DeepSpeed's estimator already counts 4 bytes × the largest layer in its model states; the gathered buffers are
 *   counted on top, for frozen LoRA bases as for full training.
 * - The optimizer step ({@link OPTIMIZER_STEPS}), a planned knob (`optimizerStep`) the runtime constructs AdamW or SGD
 *   with: `fused` (`torch._fused_adamw_`) allocates no temporaries; `foreach`, PyTorch's default on CUDA when neither
 *   flag is given (and so HF Trainer's `adamw_torch`), allocates one temporary the size of the parameters it steps,
 *   in the state dtype (`exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)` in `_multi_tensor_adamw`);
 *   `for-loop` (`foreach=False`, `_single_tensor_adamw`) makes `denom` one parameter at a time: the square root and
 *   the quotient of the largest tensor. DeepSpeed's CPU Adam steps offloaded states on the host: none on the GPU.
 */
import { DEEPSPEED_BUCKET_ELEMENTS } from "./deepspeed";
import type { ZeroStage } from "./model-states";

/** `stage3_max_live_parameters` and `stage3_max_reuse_distance` of the rendered DeepSpeed config. */
export const ZERO3_MAX_LIVE_PARAMETERS = 100_000_000;

/** Optimizer step implementations (`torch.optim.AdamW(fused=True)`, `(foreach=True)`, `(foreach=False)`). */
export const OPTIMIZER_STEPS = ["fused", "foreach", "for-loop"] as const;
export type OptimizerStep = (typeof OPTIMIZER_STEPS)[number];
/** The default: the runtime (ray_gpu.examples.loop) constructs the optimizer with `fused=True` on GPUs. */
export const DEFAULT_OPTIMIZER_STEP: OptimizerStep = "fused";

/** What one optimizer step works on, on one GPU. */
export interface SteppedParameters {
  /** Parameters this GPU steps. */
  readonly parameters: number;
  /** The largest single tensor among them. */
  readonly largestTensor: number;
  /** Bytes per optimizer-state element (4 for fp32 states, 2 for pure bf16). */
  readonly stateBytes: number;
}

/** Bytes of each implementation's temporaries during the step. */
const STEP_TEMPORARY_BYTES: { readonly [S in OptimizerStep]: (p: SteppedParameters) => number } = {
  fused: () => 0,
  foreach: (p) => p.parameters * p.stateBytes,
  "for-loop": (p) => 2 * Math.min(p.largestTensor, p.parameters) * p.stateBytes,
};

/** Bytes of the step's temporaries. */
export function optimizerStepTemporaryBytes(step: OptimizerStep, stepped: SteppedParameters): number {
  return STEP_TEMPORARY_BYTES[step](stepped);
}

/** Communication buffers of one GPU, bytes. */
export function communicationBytes(args: {
  zeroStage: ZeroStage;
  gpus: number;
  /** Bytes of this GPU's full gradients (plain DDP buckets). */
  ddpGradientBytes: number;
  /** Parameters that train (the reduce bucket never holds more). */
  trainableParameters: number;
  largestLayerParameters: number;
}): number {
  if (args.zeroStage === 0) return args.gpus > 1 ? args.ddpGradientBytes : 0;
  const buckets = 2 * 2 * Math.min(DEEPSPEED_BUCKET_ELEMENTS, args.trainableParameters);
  const gathered = args.zeroStage === 3 ? 2 * Math.max(ZERO3_MAX_LIVE_PARAMETERS, args.largestLayerParameters) : 0;
  return buckets + gathered;
}
