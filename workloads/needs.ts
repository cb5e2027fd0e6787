/** What each workload kind needs from its worker pods (object store, shared memory, heap), with the reasons. */
import type { WorkerNeeds } from "../core/cluster/shape";
import type { WorkloadKind } from "../core/config/workloads";

const TRAINING: WorkerNeeds = {
  objectStoreFraction: 0.2,
  shmExtraGiBPerGpu: 2,
  minHeapGiBPerGpu: 4,
  why: {
    objectStore: "training moves little through the object store (Ray Data ingest blocks, reported metrics, checkpoint handles), so it gets less than Ray's 30% default and the processes keep the rest",
    shmExtra: "PyTorch DataLoader workers pass batches through shared memory",
    minHeap: "each rank loads the model and optimizer on CPU before moving them to the GPU",
  },
};

/** Per kind. Exhaustive, so a new kind fails to compile until its needs are described. */
export const WORKER_NEEDS: { readonly [K in WorkloadKind]: WorkerNeeds } = {
  TrainingJob: TRAINING,
  LoRAFineTune: TRAINING,
  EmbeddingPipeline: {
    objectStoreFraction: 0.5,
    shmExtraGiBPerGpu: 1,
    minHeapGiBPerGpu: 4,
    why: {
      objectStore: "Ray Data streams blocks through the object store; Ray's performance guide recommends at least 50% of memory for data workloads",
      shmExtra: "tokenizer workers and the GPU actor's batches",
      minHeap: "the encoder actor and its tokenizer",
    },
  },
  BatchInference: {
    objectStoreFraction: 0.3,
    shmExtraGiBPerGpu: 1,
    minHeapGiBPerGpu: 4,
    why: {
      objectStore: "prompts and generations stream through Ray Data blocks; Ray's 30% default",
      shmExtra: "the inference engine's worker processes",
      minHeap: "the engine loads weights through host memory",
    },
  },
};
