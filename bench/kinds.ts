/** The workloads the benchmarks generate stacks from: every kind in turn, on pools large enough for all of them. */
export const KINDS = [
  { kind: "TrainingJob", model: "meta-llama/Llama-3.2-1B", gpus: 4, nodePool: "a10g-4x", globalBatchSize: 64 },
  {
    kind: "EmbeddingPipeline",
    model: "BAAI/bge-large-en-v1.5",
    gpus: 1,
    nodePool: "a10g-1x",
    dataset: { uri: "s3://bench-data/docs/", rows: 1e6 },
  },
  {
    kind: "BatchInference",
    model: "meta-llama/Llama-3.1-8B-Instruct",
    gpus: 1,
    nodePool: "a10g-1x",
    sweep: { temperature: [0.2, 0.7] },
  },
  { kind: "LoRAFineTune", model: "meta-llama/Llama-3.1-8B", gpus: 4, nodePool: "a10g-4x", globalBatchSize: 64 },
];
