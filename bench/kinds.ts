import { stringify } from "yaml";

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

/**
 * The `ray-gpu:` config of a generated prod stack of `n` workloads (every kind in turn, each value its own copy, so a
 * YAML writer makes no anchors) on two GPU pools of up to `maxNodes` nodes: what the benchmarks plan and render.
 */
export function benchStackConfig(n: number, maxNodes: number) {
  return {
    environment: "prod",
    region: "us-east-1",
    platform: {
      cluster: { mode: "create", name: "bench", publicEndpoint: false },
      cpuNodeGroup: { instanceType: "m6i.8xlarge" },
      gpuNodeGroups: [
        { name: "a10g-4x", instanceType: "g5.12xlarge", maxNodes },
        { name: "a10g-1x", instanceType: "g5.2xlarge", maxNodes },
      ],
    },
    workloads: Array.from({ length: n }, (_, i) => ({
      ...structuredClone(KINDS[i % KINDS.length]),
      name: `w${i}`,
      image: "rayproject/ray:2.58.0-py311-gpu",
      entrypoint: "python job.py",
    })),
  };
}

/** A stack file of {@link benchStackConfig}'s `n` workloads, in block YAML as users write it, on pools of 1,000 nodes. */
export function benchStackFile(n: number): string {
  const config = benchStackConfig(n, 1000);
  return stringify({ config: Object.fromEntries(Object.entries(config).map(([k, v]) => [`ray-gpu:${k}`, v])) });
}
