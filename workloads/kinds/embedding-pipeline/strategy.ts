/** EmbeddingPipeline: Ray Data batch embeddings with a fixed pool of encoder actors. */
import type { WorkerNeeds } from "../../../core/cluster/shape";
import { resolveModel } from "../../../core/config/model-ref";
import { EmbeddingPipelineSpecSchema, type EmbeddingPipelineSpec } from "../../../core/config/workloads";
import { DecisionLog } from "../../../core/decisions";
import { planEmbeddingMemory } from "../../../core/memory/plan-inference";
import type { ModelArchitecture } from "../../../core/models/types";
import type { GpuPoolPlan } from "../../../core/pools";
import { dataSections, tuneData } from "../ray-data/tune";
import { checkContextLength } from "../shared/context-length";
import type { KindMemoryPlan } from "../api/plans";
import type { KindStrategy } from "../api/strategy";
import type { EmbeddingKnobs } from "../../contract/document";
import { embeddingForecast } from "../ray-data/forecast";

/** Encoders below this size cannot keep an A10G busy from one process. */
export const SMALL_ENCODER_PARAMETERS = 150e6;

const NEEDS: WorkerNeeds = {
  objectStoreFraction: 0.5,
  shmExtraGiBPerGpu: 1,
  minHeapGiBPerGpu: 4,
  why: {
    objectStore:
      "Ray Data streams blocks through the object store; Ray's performance guide recommends at least 50% of memory for data workloads",
    shmExtra: "tokenizer workers and the GPU actor's batches",
    minHeap: "the encoder actor and its tokenizer",
  },
};

/**
 * A small encoder cannot keep an A10G busy from one process (it waits on batch assembly and host-to-device copies):
 * two actors share each GPU and overlap that work, each with half the memory.
 */
function actorsPerGpu(model: ModelArchitecture, log: DecisionLog): number {
  const millions = (model.parameters / 1e6).toFixed(0);
  if (model.parameters >= SMALL_ENCODER_PARAMETERS)
    return 1 / log.decide("gpusPerActor", 1, `${millions}M parameters: one actor keeps the GPU busy`);
  const reason =
    `${millions}M parameters < ${SMALL_ENCODER_PARAMETERS / 1e6}M: two actors per GPU overlap one's ` +
    `batch assembly with the other's compute; each plans with half the GPU`;
  return 1 / log.decide("gpusPerActor", 0.5, reason);
}

function planMemory(spec: EmbeddingPipelineSpec, pool: GpuPoolPlan): KindMemoryPlan<EmbeddingKnobs> {
  const model = resolveModel(spec.model);
  const log = new DecisionLog();
  const sequenceLength = spec.sequenceLength ?? model.maxSequenceLength ?? 512;
  if (spec.sequenceLength === undefined)
    log.decide("sequenceLength", sequenceLength, "the model's maximum sequence length");
  const actors = actorsPerGpu(model, log);
  const plan = planEmbeddingMemory({
    model,
    sequenceLength,
    batchSize: spec.batchSize,
    attention: spec.attention,
    usableGiB: pool.node.usableGpuMemoryGiB / actors,
  });
  const knobs = {
    batchSize: plan.batchSize,
    sequenceLength,
    attentionImplementation: plan.attentionImplementation,
    gpus: spec.gpus,
    gpusPerActor: 1 / actors,
  };
  return {
    model,
    memory: plan.memory,
    fits: plan.fits,
    knobs,
    decisions: [...log.decisions, ...plan.decisions],
    advice: plan.advice,
  };
}

export const EMBEDDING_PIPELINE: KindStrategy<"EmbeddingPipeline"> = {
  schema: EmbeddingPipelineSpecSchema,
  rayResource: "RayJob",
  needs: NEEDS,
  check(spec, _pool, path, issues) {
    checkContextLength(
      resolveModel(spec.model),
      spec.sequenceLength,
      { path: `${path}.sequenceLength`, value: spec.sequenceLength },
      issues,
    );
  },
  planMemory,
  tune: ({ spec, memory, shape, environment, path }) =>
    tuneData({
      spec,
      shape,
      environment,
      gpusPerActor: memory.knobs.gpusPerActor,
      batchSizePerActor: memory.knobs.batchSize,
      sequenceTokens: memory.knobs.sequenceLength,
      outputBytesPerRow: 4 * (memory.model.embeddingDim ?? memory.model.hiddenSize),
      rowsPerInputRow: 1,
      path,
    }),
  forecast: embeddingForecast,
  document: ({ spec, tuning, storagePrefix }) => ({
    sections: dataSections(tuning, spec.outputUri ?? `${storagePrefix}results/${spec.name}/`),
    files: {},
  }),
};
