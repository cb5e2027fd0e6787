/**
 * A training job's optimizer step as the forecast models it (core/forecast/training.ts): the one step time the plan
 * uses, for the checkpoint cadence and the watchdog (./tune.ts) and for the job's forecast (../shared/forecast.ts).
 */
import type { LoRAFineTuneSpec, TrainingJobSpec } from "../../../core/config/workloads";

import { linksOf } from "../../../core/forecast/job";
import type { TrainingMethod } from "../../../core/forecast/flops";
import { optimizerBytesPerWeight, type TrainingStepInput } from "../../../core/forecast/training";
import type { Transport } from "../../../core/forecast/types";
import { adapterParameters, defaultLoraTargets } from "../../../core/memory/lora";
import type { ModelArchitecture } from "../../../core/models/types";
import type { PoolNode } from "../../../core/pools";
import type { TrainingJobKnobs } from "../../contract/document";

/** What the step is computed from: the spec, the memory plan's model and knobs, and the pool's node. */
export interface TrainingStepArgs {
  readonly spec: TrainingJobSpec | LoRAFineTuneSpec;
  readonly model: ModelArchitecture;
  /** Image tokens a vision-language sample adds. */
  readonly imageTokensPerSample: number | undefined;
  readonly knobs: TrainingJobKnobs;
  readonly node: PoolNode;
  /** How NCCL crosses the job's nodes: EFA where its workers have it, else TCP over ENA. */
  readonly transport: Transport;
}

/** The weights a training job updates: all of them, or its adapters. */
export function trainableParameters(spec: TrainingJobSpec | LoRAFineTuneSpec, model: ModelArchitecture): number {
  return spec.kind === "LoRAFineTune"
    ? adapterParameters(model, spec.lora.rank, spec.lora.targetModules ?? defaultLoraTargets(model))
    : model.parameters;
}

const methodOf = (spec: TrainingJobSpec | LoRAFineTuneSpec): TrainingMethod =>
  spec.kind === "TrainingJob" ? "full" : spec.lora.quantization === "none" ? "lora" : "qlora";

/** The step model's input for the job. */
export function trainingStepInput(a: TrainingStepArgs): TrainingStepInput {
  const { spec, knobs } = a;
  // Pure bf16 keeps no fp32 copy of a full model's weights; adapters are trained in fp32 whatever the base.
  const pureBf16 = spec.precision === "bf16-true" && spec.kind === "TrainingJob";
  const trainable = trainableParameters(spec, a.model);
  return {
    model: a.model,
    method: methodOf(spec),
    trainableParameters: trainable,
    adapterFeatures: spec.kind === "LoRAFineTune" ? trainable / spec.lora.rank : 0,
    sampleTokens: knobs.sequenceLength + (a.imageTokensPerSample ?? 0),
    microBatchSize: knobs.microBatchSize,
    gradientAccumulation: knobs.gradientAccumulationSteps,
    gpus: spec.gpus,
    gpusPerNode: a.node.gpus,
    zeroStage: knobs.zeroStage as TrainingStepInput["zeroStage"],
    gradientCheckpointing: knobs.gradientCheckpointing,
    gradientBytes: pureBf16 ? 2 : 4,
    optimizerBytesPerWeight: optimizerBytesPerWeight(spec.optimizer, spec.optimizerStep, pureBf16),
    gpu: a.node,
    links: linksOf(a.node.networkBaselineMbps, a.transport),
  };
}
