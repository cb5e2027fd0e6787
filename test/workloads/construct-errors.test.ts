/**
 * A construct's error names its workload (`TrainingJob "llama-ddp".gpus`), and a hint, once followed, is not refused
 * again: hints computed from a refused gpus count wait until the count is valid.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/errors";
import { planPools } from "../../core/pools";
import { BatchInference, EmbeddingPipeline, LoRAFineTune, TrainingJob } from "../../workloads/workload";
import { repoStack, runtime } from "../helpers/fixtures";

const ctx = {
  environment: "dev" as const,
  pools: planPools(repoStack("dev").platform),
  namespace: "ray-jobs",
  runtime,
};
const job = {
  kind: "TrainingJob",
  name: "llama-ddp",
  gpus: 6,
  model: "meta-llama/Llama-3.2-1B",
  image: "rayproject/ray:2.58.0-py311-gpu",
  entrypoint: "python x.py",
  globalBatchSize: 64,
} as const;

/** The ConfigError `fn` throws. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("no ConfigError thrown");
}

describe("construct errors", () => {
  it("name the workload by kind and name, from the constructor and from render(), thrown synchronously", () => {
    const built = configError(() => new TrainingJob({ ...job, gpus: 1.5 }));
    expect(built.issues.map((i) => i.path)).toEqual(['TrainingJob "llama-ddp".gpus']);
    const rendered = configError(() => new TrainingJob(job).render(ctx));
    expect(rendered.message).toBe(
      '1 problem\n  ✖ TrainingJob "llama-ddp".gpus: must be a multiple of 4 (GPUs per g5.12xlarge node of pool ' +
        '"a10g-4x"): use 4 or 8, or a pool of 1-GPU instances (got 6)',
    );
    const model = "meta-llama/Llama-3.2-1B";
    const others = [
      () => new LoRAFineTune({ kind: "LoRAFineTune", name: "sft", model, gpus: 4 }).render(ctx),
      () => new EmbeddingPipeline({ kind: "EmbeddingPipeline", name: "emb", model, gpus: 3 }).plan(ctx),
      () => new BatchInference({ kind: "BatchInference", name: "gen", model, gpus: 0 }),
    ];
    expect(others.map((fn) => configError(fn).issues[0]!.path)).toEqual([
      'LoRAFineTune "sft".image',
      'EmbeddingPipeline "emb".gpus',
      'BatchInference "gen".gpus',
    ]);
    // Without a name the kind alone prefixes the path.
    expect(configError(() => new TrainingJob({ ...job, name: undefined } as never)).issues[0]!.path).toBe(
      "TrainingJob.name",
    );
  });

  it("give no globalBatchSize hint computed from a refused gpus count, and the gpus fix then renders", () => {
    const err = configError(() => new TrainingJob({ ...job, globalBatchSize: 66 }).render(ctx));
    expect(err.issues.map((i) => i.path)).toEqual(['TrainingJob "llama-ddp".gpus']);
    const fixed = Number(/use (\d+)/.exec(err.issues[0]!.message)![1]);
    expect(fixed).toBe(4);
    // Following the fix, the batch is checked against the new count: its hint, followed, renders.
    const next = configError(() => new TrainingJob({ ...job, globalBatchSize: 66, gpus: fixed }).render(ctx));
    expect(next.issues.map((i) => [i.path, i.value])).toEqual([['TrainingJob "llama-ddp".globalBatchSize', 66]]);
    const batch = Number(/use (\d+)/.exec(next.issues[0]!.message)![1]);
    expect(new TrainingJob({ ...job, globalBatchSize: batch, gpus: fixed }).render(ctx).length).toBeGreaterThan(0);
    // The issue's own case: 64 splits over the suggested 4 GPUs, so following the gpus hint is enough.
    expect(new TrainingJob({ ...job, gpus: fixed }).render(ctx).length).toBeGreaterThan(0);
  });

  it("report a misspelt required key once, as the unknown key with the one it means", () => {
    const { model, ...rest } = job;
    const err = configError(() => new TrainingJob({ ...rest, modle: model } as never));
    expect(err.issues).toEqual([
      {
        path: 'TrainingJob "llama-ddp".modle',
        message: 'unknown key; did you mean "model"? ("model" is required and missing)',
        value: model,
      },
    ]);
  });
});
