/** The inference planners: the embedding batch and vLLM's tensor parallelism on A10Gs. */
import { describe, expect, it } from "vitest";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import { catalogModel } from "../../../core/models";
import { planEmbeddingMemory, planServingMemory } from "../../../core/memory/plan-inference";

const A10G_CUDA_TOTAL_GIB = ACCELERATORS.A10G.cudaTotalGiB;

describe("inference planners", () => {
  it("picks the largest embedding batch that fits, and keeps a pinned one", () => {
    const p = planEmbeddingMemory({
      model: catalogModel("BAAI/bge-large-en-v1.5")!,
      sequenceLength: 512,
      usableGiB: A10G_CUDA_TOTAL_GIB,
    });
    expect(p.fits).toBe(true);
    expect(p.batchSize).toBe(1024);
    expect(p.memory.requiredGiB).toBeLessThanOrEqual(A10G_CUDA_TOTAL_GIB * 0.95);
    // At 8192 tokens per row (bge-m3's context) the same GPU holds a far smaller batch.
    const long = planEmbeddingMemory({
      model: catalogModel("BAAI/bge-m3")!,
      sequenceLength: 8192,
      usableGiB: A10G_CUDA_TOTAL_GIB,
    });
    expect(long.batchSize).toBeLessThan(128);
    expect(
      planEmbeddingMemory({
        model: catalogModel("BAAI/bge-m3")!,
        sequenceLength: 8192,
        batchSize: long.batchSize * 2,
        usableGiB: A10G_CUDA_TOTAL_GIB,
      }).fits,
    ).toBe(false);
    expect(
      planEmbeddingMemory({
        model: catalogModel("BAAI/bge-large-en-v1.5")!,
        sequenceLength: 512,
        batchSize: 8,
        usableGiB: A10G_CUDA_TOTAL_GIB,
      }).batchSize,
    ).toBe(8);
  });

  it("uses tensor parallelism only when one A10G cannot hold the weights and a KV cache", () => {
    const onFourA10Gs = (id: string) =>
      planServingMemory({
        model: catalogModel(id)!,
        gpus: 4,
        gpusPerNode: 4,
        maxPromptTokens: 1024,
        maxNewTokens: 512,
        gpuMemoryUtilization: 0.9,
        usableGiB: A10G_CUDA_TOTAL_GIB,
      });
    const small = onFourA10Gs("meta-llama/Llama-3.1-8B-Instruct");
    expect(small).toMatchObject({ tensorParallelSize: 1, replicas: 4, kvCacheBytesPerToken: 131072 });
    expect(small.maxConcurrentSequences).toBeGreaterThanOrEqual(4);
    const big = onFourA10Gs("Qwen/Qwen2.5-14B");
    expect(big.tensorParallelSize).toBe(2);
    expect(big.replicas).toBe(2);
  });
});
