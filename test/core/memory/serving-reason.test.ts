/**
 * The tensor-parallel reason says what the plan holds: where no size the pool allows holds enough sequences, it says
 * so and names the concurrency the plan has, not the target it missed (issue 53, class 3).
 */
import { describe, expect, it } from "vitest";
import { catalogModel } from "../../../core/models";
import { MIN_CONCURRENCY, planServingMemory } from "../../../core/memory/plan-inference";
import { ACCELERATORS } from "../../../core/catalog/accelerators";

const plan = (gpus: number, gpusPerNode: number, maxPromptTokens: number) =>
  planServingMemory({
    model: catalogModel("meta-llama/Llama-3.1-8B")!,
    gpus,
    gpusPerNode,
    maxPromptTokens,
    maxNewTokens: 512,
    gpuMemoryUtilization: 0.9,
    usableGiB: ACCELERATORS.A10G.cudaTotalGiB,
  });
const reason = (p: ReturnType<typeof plan>) => p.decisions.find((d) => d.key === "tensorParallelSize")!.reason;

describe("the tensor-parallel reason", () => {
  it("on one A10G at a 29k context, names the sequences the plan holds, not the target it missed", () => {
    const p = plan(1, 1, 28_500);
    expect(p.maxConcurrentSequences).toBeLessThan(MIN_CONCURRENCY);
    expect(reason(p)).toBe(
      `no size this pool allows holds ${MIN_CONCURRENCY} sequences of 29012 tokens: the largest, whose KV cache ` +
        `holds ${p.maxConcurrentSequences === 1 ? "1 sequence" : `${p.maxConcurrentSequences} sequences`}`,
    );
  });

  it("where a size holds the target, says it is the smallest that does", () => {
    const p = plan(4, 4, 1024);
    expect(p.maxConcurrentSequences).toBeGreaterThanOrEqual(MIN_CONCURRENCY);
    expect(reason(p)).toMatch(/^smallest size whose KV cache holds at least 4 sequences of 1536 tokens; /);
  });
});
