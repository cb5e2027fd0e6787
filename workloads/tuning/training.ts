/**
 * What a training or fine-tuning job's code receives beyond the memory knobs: Ray Train's scaling (one worker per
 * GPU and its CPUs), DataLoader workers, checkpointing and the failure policy, and the DeepSpeed config when ZeRO
 * is used. Pure; every value comes with its reason.
 */
import type { ClusterShapePlan } from "../../core/cluster/shape";
import type { LoRAFineTuneSpec, TrainingJobSpec } from "../../core/config/workloads";
import type { Environment } from "../../core/config/stack";
import { DecisionLog, type Decision } from "../../core/decisions";
import type { WorkloadMemoryPlan } from "../memory";
import { DEEPSPEED_BUCKET_ELEMENTS } from "../../core/memory/deepspeed";

/** More DataLoader workers per GPU rarely help tokenized text; beyond this they only hold memory. */
export const MAX_DATALOADER_WORKERS = 8;

/** Ray Train settings of the job. */
export interface TrainTuning {
  readonly numWorkers: number;
  readonly resourcesPerWorker: { readonly CPU: number; readonly GPU: 1 };
  readonly dataloaderWorkers: number;
  /** Checkpoints go under this key prefix of the stack's bucket (bucket in `RAY_GPU_STORAGE_BUCKET`). */
  readonly checkpointPrefix: string;
  readonly checkpointsToKeep: number;
  /** Ray Train FailureConfig.max_failures: restarts from the last checkpoint. */
  readonly maxFailures: number;
  /** Set when ZeRO is used; also written as deepspeed.json. */
  readonly deepspeed: Readonly<Record<string, unknown>> | undefined;
  /** With optimizer offload: the optimizer class DeepSpeed requires the code to construct. */
  readonly offloadOptimizerClass?: string;
}

/** Tunes Ray Train (and DeepSpeed) for a planned training job. */
export function tuneTraining(args: {
  spec: TrainingJobSpec | LoRAFineTuneSpec;
  memory: WorkloadMemoryPlan;
  shape: ClusterShapePlan;
  environment: Environment;
  storagePrefix: string;
}): { tuning: TrainTuning; decisions: readonly Decision[] } {
  const { spec, memory, shape, environment } = args;
  const log = new DecisionLog();
  const k = memory.knobs;
  const gpusPerNode = shape.worker.gpusPerWorker;
  const cpus = Math.max(1, Math.floor((shape.worker.cpus - 1) / gpusPerNode));
  log.decide("train.numWorkers", spec.gpus, "one Ray Train worker per GPU");
  log.decide("train.resourcesPerWorker.CPU", cpus, `(${shape.worker.cpus} worker-pod CPUs - 1 left for Ray Data and the raylet) / ${gpusPerNode} GPUs per node`);
  const loaders = log.decide("train.dataloaderWorkers", Math.min(MAX_DATALOADER_WORKERS, Math.max(0, cpus - 1)), `each worker's CPUs minus its training process, at most ${MAX_DATALOADER_WORKERS}`);
  const keep = log.decide("train.checkpointsToKeep", environment === "prod" ? 3 : 1, environment === "prod" ? "prod keeps the last 3 checkpoints to resume from (older versions expire by the bucket's lifecycle rule)" : "dev keeps only the last checkpoint");
  const maxFailures = log.decide("train.maxFailures", environment === "prod" ? 3 : 0, environment === "prod" ? "prod restarts failed workers up to 3 times, resuming from the last checkpoint" : "dev fails fast");
  const checkpointPrefix = `${args.storagePrefix}checkpoints/${spec.name}/`;
  log.decide("train.checkpointPrefix", checkpointPrefix, "checkpoints go to the stack's bucket (multi-node runs need shared storage), under the workload's name");
  let deepspeed: Record<string, unknown> | undefined;
  if (Number(k["zeroStage"]) > 0) {
    const stage = Number(k["zeroStage"]);
    const offload = String(k["offload"]);
    deepspeed = {
      train_batch_size: Number(k["globalBatchSize"]),
      train_micro_batch_size_per_gpu: Number(k["microBatchSize"]),
      gradient_accumulation_steps: Number(k["gradientAccumulationSteps"]),
      gradient_clipping: 1.0,
      bf16: { enabled: spec.precision.startsWith("bf16") },
      fp16: { enabled: spec.precision === "fp16-mixed" },
      zero_optimization: {
        stage,
        overlap_comm: true,
        contiguous_gradients: true,
        reduce_bucket_size: DEEPSPEED_BUCKET_ELEMENTS,
        ...(stage <= 2 ? { allgather_bucket_size: DEEPSPEED_BUCKET_ELEMENTS, reduce_scatter: true } : { stage3_prefetch_bucket_size: DEEPSPEED_BUCKET_ELEMENTS }),
        ...(offload !== "none" ? { offload_optimizer: { device: "cpu", pin_memory: true } } : {}),
        ...(offload === "optimizer-and-parameters" ? { offload_param: { device: "cpu", pin_memory: true } } : {}),
      },
    };
    log.decide("deepspeed.zero_optimization.stage", stage, "the memory planner's choice (see zeroStage)");
    if (offload !== "none") {
      log.decide("train.offloadOptimizerClass", "deepspeed.ops.adam.DeepSpeedCPUAdam", "DeepSpeed runs offloaded optimizer steps only with its CPU Adam (zero_force_ds_cpu_optimizer): construct it with your learning rate and pass it to deepspeed.initialize");
    }
    log.decide(
      "deepspeed.reduce_bucket_size",
      DEEPSPEED_BUCKET_ELEMENTS,
      "2e8 elements (0.4 GB in 16 bit) instead of DeepSpeed's 5e8: the double-buffered buckets (0.8 GB) are counted in the memory plan, and are still large enough to fill TCP over ENA; overlap_comm hides the all-reduce behind backward",
    );
  }
  return {
    tuning: {
      numWorkers: spec.gpus,
      resourcesPerWorker: { CPU: cpus, GPU: 1 },
      dataloaderWorkers: loaders,
      checkpointPrefix,
      checkpointsToKeep: keep,
      maxFailures,
      deepspeed,
      ...(deepspeed && String(k["offload"]) !== "none" ? { offloadOptimizerClass: "deepspeed.ops.adam.DeepSpeedCPUAdam" } : {}),
    },
    decisions: log.decisions,
  };
}
