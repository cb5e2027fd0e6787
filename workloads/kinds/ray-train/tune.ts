/**
 * What a training or fine-tuning job's code receives beyond the memory knobs: Ray Train's scaling (one worker per GPU
 * and its CPUs), DataLoader workers, checkpointing and the failure policy, and the DeepSpeed config when ZeRO is used.
 * Pure; every value comes with its reason.
 */
import type { ClusterShapePlan } from "../../../core/cluster/shape";
import type { PoolNode } from "../../../core/pools";
import type { Environment } from "../../../core/config/stack";
import type { LoRAFineTuneSpec, TrainingJobSpec } from "../../../core/config/workloads";
import { DecisionLog } from "../../../core/decisions";
import { ZERO3_MAX_LIVE_PARAMETERS } from "../../../core/memory/buffers";
import { checkpointBytesPerTrainable } from "../../../core/memory/model-states";
import {
  planInterruptions,
  secondsText,
  STALL_FLOOR_SECONDS,
  STALL_STEPS,
  type InterruptionInput,
  type InterruptionPlan,
} from "../../../core/reliability/interruption";
import { DEEPSPEED_BUCKET_ELEMENTS } from "../../../core/memory/deepspeed";
import type { Offload } from "../../../core/memory/model-states";
import { DEEPSPEED_FILE, TUNING_MOUNT_PATH, type TrainingJobKnobs, type TrainSection } from "../../contract/document";
import type { DeepSpeedConfig, KindMemoryPlan, TrainingTuning } from "../api/plans";
import { trainableParameters, trainingStepInput } from "./step";
import type { StepBreakdown } from "../../../core/forecast/types";
import { trainingStep } from "../../../core/forecast/training";

/** More DataLoader workers per GPU rarely help tokenized text; beyond this they only hold memory. */
export const MAX_DATALOADER_WORKERS = 8;
/** The optimizer DeepSpeed requires under optimizer offload (`zero_force_ds_cpu_optimizer`). */
export const OFFLOAD_OPTIMIZER_CLASS = "deepspeed.ops.adam.DeepSpeedCPUAdam";

/** Per environment: how many checkpoints to keep and failures to survive, and why. */
const RESILIENCE: {
  readonly [E in Environment]: {
    readonly keep: number;
    readonly maxFailures: number;
    readonly whyKeep: string;
    readonly whyFailures: string;
  };
} = {
  dev: { keep: 1, maxFailures: 0, whyKeep: "dev keeps only the last checkpoint", whyFailures: "dev fails fast" },
  prod: {
    keep: 3,
    maxFailures: 3,
    whyKeep: "prod keeps the last 3 checkpoints to resume from (older versions expire by the bucket's lifecycle rule)",
    whyFailures: "prod restarts failed workers up to 3 times, resuming from the last checkpoint",
  },
};

/** ZeRO-3 parameters fetched ahead of use: DeepSpeed's code default (deepspeed/runtime/zero/config.py). */
export const ZERO3_PREFETCH_ELEMENTS = 50_000_000;

/** ZeRO buckets, offload and batch sizes as DeepSpeed reads them. */
function deepSpeedConfig(knobs: TrainingJobKnobs, precision: string): DeepSpeedConfig {
  const stage = knobs.zeroStage;
  return {
    train_batch_size: knobs.globalBatchSize,
    train_micro_batch_size_per_gpu: knobs.microBatchSize,
    gradient_accumulation_steps: knobs.gradientAccumulationSteps,
    gradient_clipping: 1.0,
    bf16: { enabled: precision.startsWith("bf16") },
    fp16: { enabled: precision === "fp16-mixed" },
    zero_optimization: {
      stage,
      overlap_comm: true,
      contiguous_gradients: true,
      reduce_bucket_size: DEEPSPEED_BUCKET_ELEMENTS,
      ...(stage <= 2
        ? { allgather_bucket_size: DEEPSPEED_BUCKET_ELEMENTS, reduce_scatter: true }
        : {
            stage3_prefetch_bucket_size: ZERO3_PREFETCH_ELEMENTS,
            stage3_max_live_parameters: ZERO3_MAX_LIVE_PARAMETERS,
            stage3_max_reuse_distance: ZERO3_MAX_LIVE_PARAMETERS,
          }),
      ...offloadDevices(knobs.offload),
    },
  };
}

function offloadDevices(offload: Offload): Record<string, unknown> {
  if (offload === "none") return {};
  const cpu = { device: "cpu", pin_memory: true };
  return offload === "optimizer-and-parameters"
    ? { offload_optimizer: cpu, offload_param: cpu }
    : { offload_optimizer: cpu };
}

const BUCKET_REASON =
  "2e8 elements (0.4 GB in 16 bit) instead of DeepSpeed's 5e8: the double-buffered buckets (0.8 GB) are counted in the memory plan, " +
  "and are still large enough to fill the network between nodes (TCP over ENA or EFA); overlap_comm hides the " +
  "all-reduce behind backward";

function decideDeepSpeed(knobs: TrainingJobKnobs, precision: string, log: DecisionLog): DeepSpeedConfig | undefined {
  if (knobs.zeroStage === 0) return undefined;
  const config = deepSpeedConfig(knobs, precision);
  log.decide("deepspeed.zero_optimization.stage", knobs.zeroStage, "the memory planner's choice (see zeroStage)");
  if (knobs.offload !== "none") {
    log.decide(
      "train.offloadOptimizerClass",
      OFFLOAD_OPTIMIZER_CLASS,
      "DeepSpeed runs offloaded optimizer steps only with its CPU Adam (zero_force_ds_cpu_optimizer): " +
        "construct it with your learning rate and pass it to deepspeed.initialize",
    );
  }
  log.decide("deepspeed.reduce_bucket_size", DEEPSPEED_BUCKET_ELEMENTS, BUCKET_REASON);
  if (knobs.zeroStage === 3)
    log.decide(
      "deepspeed.stage3_max_live_parameters",
      ZERO3_MAX_LIVE_PARAMETERS,
      "1e8 instead of DeepSpeed's 1e9 (also the reuse distance): with 1e9 a model under a billion parameters can stay " +
        "gathered whole around the forward/backward turn; the plan counts 2 bytes x 1e8 of gathered parameters",
    );
  return config;
}

/** One Ray Train worker per GPU, its share of the pod's CPUs, and its DataLoader workers. */
function decideWorkers(gpus: number, shape: ClusterShapePlan, log: DecisionLog) {
  const perNode = shape.worker.gpusPerWorker;
  const cpus = Math.max(1, Math.floor((shape.worker.cpus - 1) / perNode));
  const whyCpus = `(${shape.worker.cpus} worker-pod CPUs - 1 left for Ray Data and the raylet) / ${perNode} GPUs per node`;
  const whyLoaders = `each worker's CPUs minus its training process, at most ${MAX_DATALOADER_WORKERS}`;
  return {
    numWorkers: log.decide("train.numWorkers", gpus, "one Ray Train worker per GPU"),
    resourcesPerWorker: { CPU: log.decide("train.resourcesPerWorker.CPU", cpus, whyCpus), GPU: 1 },
    dataloaderWorkers: log.decide(
      "train.dataloaderWorkers",
      Math.min(MAX_DATALOADER_WORKERS, Math.max(0, cpus - 1)),
      whyLoaders,
    ),
  };
}

/** Worker restarts a job on spot capacity survives in any environment: each interruption costs one. */
export const SPOT_MAX_FAILURES = 3;

/** Checkpoints in the stack's bucket, kept and retried as the environment (and spot capacity) says. */
function decideResilience(args: TuneTrainingArgs, log: DecisionLog) {
  const { environment, storagePrefix } = args;
  const name = args.spec.name;
  const spot = args.shape.worker.spot;
  const r = RESILIENCE[environment];
  const checkpointsToKeep = log.decide("train.checkpointsToKeep", r.keep, r.whyKeep);
  const maxFailures =
    spot && r.maxFailures < SPOT_MAX_FAILURES
      ? log.decide(
          "train.maxFailures",
          SPOT_MAX_FAILURES,
          `the pool's nodes can be spot (capacityType spot or spot-with-fallback): an interruption takes a node, ` +
            `and Ray Train restarts the workers from the last checkpoint, the data from where it stopped (up to ` +
            `${SPOT_MAX_FAILURES} times)`,
        )
      : log.decide("train.maxFailures", r.maxFailures, r.whyFailures);
  const whyPrefix =
    "checkpoints go to the stack's bucket (multi-node runs need shared storage), under the workload's name";
  const checkpointPrefix = log.decide("train.checkpointPrefix", `${storagePrefix}checkpoints/${name}/`, whyPrefix);
  return { checkpointPrefix, checkpointsToKeep, maxFailures };
}

/** The interruption model's input: the step's time, what a checkpoint holds, the writers, and the capacity. */
function interruptionInput(args: TuneTrainingArgs, step: StepBreakdown): InterruptionInput {
  const { spec, memory, knobs, shape, node } = args;
  const model = memory.model;
  const perWeight = checkpointBytesPerTrainable(spec.precision, spec.optimizer, spec.kind === "LoRAFineTune");
  return {
    stepSeconds: step.busySeconds + step.waitSeconds,
    checkpointBytes: trainableParameters(spec, model) * perWeight,
    gpus: spec.gpus,
    writerNodes: knobs.zeroStage > 0 ? shape.worker.replicas : 1,
    networkBaselineMbps: node.networkBaselineMbps,
    spot: shape.worker.spot,
  };
}

/** The checkpoint cadence and the watchdog's window, from the interruption plan. */
function decideCadence(p: InterruptionPlan, log: DecisionLog) {
  const whyStall =
    `${STALL_STEPS} steps of about ${secondsText(p.stepSeconds)} s, at least ${STALL_FLOOR_SECONDS / 60} minutes ` +
    "(a restart onto a new node shows no step either): the watchdog fails a job whose steps stopped";
  return {
    checkpointEverySteps: log.decide("train.checkpointEverySteps", p.checkpointEverySteps, p.whyCadence),
    stallAfterSeconds: log.decide("train.stallAfterSeconds", p.stallAfterSeconds, whyStall),
  };
}

/**
 * What {@link tuneTraining} tunes from: the spec, its memory plan and knobs, the shape and instance type, the
 * environment and the bucket prefix.
 */
export interface TuneTrainingArgs {
  readonly spec: TrainingJobSpec | LoRAFineTuneSpec;
  /** The memory plan: the model, and the image tokens a vision-language sample adds. */
  readonly memory: KindMemoryPlan<TrainingJobKnobs> & { readonly imageTokensPerSample?: number | undefined };
  readonly knobs: TrainingJobKnobs;
  readonly shape: ClusterShapePlan;
  /** What every node of the job's pool offers (the slowest GPU and network of its instance types). */
  readonly node: PoolNode;
  readonly environment: Environment;
  readonly storagePrefix: string;
}

/** Tunes Ray Train (and DeepSpeed) for a planned training job. */
export function tuneTraining(args: TuneTrainingArgs): TrainingTuning {
  const { spec, memory, knobs, node } = args;
  const log = new DecisionLog();
  const workers = decideWorkers(spec.gpus, args.shape, log);
  const resilience = decideResilience(args, log);
  const stepInput = trainingStepInput({
    spec,
    model: memory.model,
    imageTokensPerSample: memory.imageTokensPerSample,
    knobs,
    node,
    transport: args.shape.worker.efa ? "efa" : "tcp",
  });
  const step = trainingStep(stepInput);
  const interruptions = planInterruptions(interruptionInput(args, step));
  const cadence = decideCadence(interruptions, log);
  const deepspeed = decideDeepSpeed(args.knobs, spec.precision, log);
  const offload = deepspeed && args.knobs.offload !== "none" ? { offloadOptimizerClass: OFFLOAD_OPTIMIZER_CLASS } : {};
  return {
    engine: "ray-train",
    train: { ...workers, ...resilience, ...cadence, precision: spec.precision, deepspeed, ...offload },
    interruptions,
    step,
    stepInput,
    decisions: log.decisions,
  };
}

/** The train section of the document and, under ZeRO, the DeepSpeed config beside it. */
export function trainSection(tuning: TrainingTuning): { train: TrainSection; files: Record<string, object> } {
  const { deepspeed, ...train } = tuning.train;
  if (!deepspeed) return { train, files: {} };
  return {
    train: { ...train, deepspeedConfigFile: `${TUNING_MOUNT_PATH}/${DEEPSPEED_FILE}` },
    files: { [DEEPSPEED_FILE]: deepspeed },
  };
}
