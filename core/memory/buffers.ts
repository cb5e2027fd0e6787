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
 * - The optimizer step: PyTorch's `foreach` AdamW allocates one temporary the size of the parameters it steps, in the
 *   state dtype (`exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)` in `_multi_tensor_adamw`); `fused=True`
 *   (`torch._fused_adamw_`) allocates none. The runtime constructs `torch.optim.AdamW(fused=True)` on GPUs, and
 *   DeepSpeed's CPU Adam steps on the host, so the planned step has no temporaries; `foreach` is modelled for
 *   published runs that used it.
 */
import { DEEPSPEED_BUCKET_ELEMENTS } from "./deepspeed";
import type { ZeroStage } from "./model-states";

/** `stage3_max_live_parameters` and `stage3_max_reuse_distance` of the rendered DeepSpeed config. */
export const ZERO3_MAX_LIVE_PARAMETERS = 100_000_000;

/** Optimizer step implementations. */
export type OptimizerStep = "fused" | "foreach";
/** What the runtime uses (ray_gpu.examples.loop constructs AdamW with `fused=True` on CUDA). */
export const PLANNED_OPTIMIZER_STEP: OptimizerStep = "fused";

/** Bytes of the step's temporaries for `parameters` stepped on this GPU with `stateBytes`-wide states. */
export function optimizerStepTemporaryBytes(step: OptimizerStep, parameters: number, stateBytes: number): number {
  return step === "fused" ? 0 : parameters * stateBytes;
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
