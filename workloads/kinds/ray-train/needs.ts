/** What a training kind's worker pods need (object store, shared memory, heap), with the reasons. */
import type { WorkerNeeds } from "../../../core/cluster/shape";

export const TRAINING_NEEDS: WorkerNeeds = {
  objectStoreFraction: 0.2,
  shmExtraGiBPerGpu: 2,
  minHeapGiBPerGpu: 4,
  why: {
    objectStore:
      "training moves little through the object store (Ray Data ingest blocks, reported metrics, checkpoint " +
      "handles), so it gets less than Ray's 30% default and the processes keep the rest",
    shmExtra: "PyTorch DataLoader workers pass batches through shared memory",
    minHeap: "each rank loads the model and optimizer on CPU before moving them to the GPU",
  },
};
