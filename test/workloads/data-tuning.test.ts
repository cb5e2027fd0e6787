import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { planPools } from "../../core/pools";
import { PlatformSchema } from "../../core/config/platform";
import { GPU_INSTANCES } from "../../core/catalog/instances";
import { BatchInference, EmbeddingPipeline, LoRAFineTune, TrainingJob } from "../../workloads/workload";
import { RAY_DATA_OBJECT_STORE_FRACTION } from "../../workloads/kinds/ray-data/tune";
import { sweepGrid } from "../../workloads/kinds/batch-inference/strategy";
import { planStack } from "../../workloads/stack";
import type { ConfigMap } from "../../workloads/k8s/types";
import type { TuningDocument } from "../../workloads/contract/document";
import { repoStack, runtime } from "../helpers/fixtures";

const ctx = (
  instanceType: "g5.2xlarge" | "g5.12xlarge" | "g5.48xlarge",
  maxNodes: number,
  environment: "dev" | "prod" = "prod",
) => ({
  environment,
  namespace: "ray-jobs",
  runtime,
  pools: planPools(
    PlatformSchema.parse({
      cluster: { mode: "create", name: "t" },
      cpuNodeGroup: { instanceType: "m6i.8xlarge" },
      gpuNodeGroups: [{ name: "gpu", instanceType, maxNodes }],
    }),
  ),
});

describe("Ray Data tuning", () => {
  it("gives a small encoder two actors per GPU, each planned with half the memory, in a pool that starts at full size", () => {
    const plan = new EmbeddingPipeline({
      kind: "EmbeddingPipeline",
      name: "e",
      model: "BAAI/bge-small-en-v1.5",
      gpus: 4,
    }).plan(ctx("g5.12xlarge", 2));
    expect(plan.memory.knobs.gpusPerActor).toBe(0.5);
    expect(plan.memory.memory.usableGiB).toBeCloseTo(21.99 / 2, 5);
    expect(plan.tuning.data.pool).toMatchObject({ actorPoolSize: 8, gpusPerActor: 0.5 });
    const large = new EmbeddingPipeline({
      kind: "EmbeddingPipeline",
      name: "e",
      model: "BAAI/bge-large-en-v1.5",
      gpus: 4,
    }).plan(ctx("g5.12xlarge", 2));
    expect(large.tuning.data.pool).toMatchObject({ actorPoolSize: 4, gpusPerActor: 1 });
  });

  it("keeps a pinned preprocessing pool and block size, and refuses ones the pods cannot hold, under their own paths", () => {
    const embed = (extra: object) =>
      new EmbeddingPipeline({
        kind: "EmbeddingPipeline",
        name: "e",
        model: "BAAI/bge-large-en-v1.5",
        gpus: 4,
        ...extra,
      });
    const pinned = embed({ preprocessConcurrency: 3, blockSizeMiB: 4 }).plan(ctx("g5.12xlarge", 2));
    expect(pinned.tuning.data.pool.preprocessConcurrency).toBe(3);
    expect(pinned.tuning.data.data.blockSizeBytes).toBe(4 * 2 ** 20);
    const cpusLeft = pinned.shape.worker.cpus - 4;
    expect(() =>
      embed({ preprocessConcurrency: cpusLeft + 1 }).plan({ ...ctx("g5.12xlarge", 2), path: "w[0]" }),
    ).toThrow(
      expect.objectContaining({
        issues: [
          expect.objectContaining({
            path: "w[0].preprocessConcurrency",
            value: cpusLeft + 1,
            message: expect.stringContaining(`leaves ${cpusLeft}: set at most ${cpusLeft} or leave it out`),
          }),
        ],
      }),
    );
    expect(() => embed({ blockSizeMiB: 1024 }).plan({ ...ctx("g5.12xlarge", 2), path: "w[0]" })).toThrow(
      expect.objectContaining({
        issues: [
          expect.objectContaining({
            path: "w[0].blockSizeMiB",
            value: 1024,
            message: expect.stringContaining("and spill: set a smaller block size or leave it out"),
          }),
        ],
      }),
    );
  });

  it("feeds the actors with every other CPU of the worker pods", () => {
    const plan = new EmbeddingPipeline({
      kind: "EmbeddingPipeline",
      name: "e",
      model: "BAAI/bge-large-en-v1.5",
      gpus: 8,
    }).plan(ctx("g5.12xlarge", 2));
    expect(plan.tuning.data.pool.preprocessConcurrency).toBe(2 * plan.shape.worker.cpus - 8);
  });

  it("reads a sample in dev and everything in prod; sets no read parallelism, which Ray 2.58 ignores for parquet", () => {
    const spec = {
      kind: "EmbeddingPipeline" as const,
      name: "e",
      model: "BAAI/bge-large-en-v1.5",
      gpus: 1,
      dataset: { uri: "s3://my-bucket/data/", rows: 10_000_000 },
    };
    const dev = new EmbeddingPipeline(spec).plan(ctx("g5.2xlarge", 1, "dev")).tuning.data.data;
    const prod = new EmbeddingPipeline(spec).plan(ctx("g5.2xlarge", 1, "prod")).tuning.data.data;
    expect([dev.sampleFraction, dev.rowsToRead]).toEqual([0.01, 100_000]);
    expect([prod.sampleFraction, prod.rowsToRead]).toEqual([1, 10_000_000]);
    expect(prod).not.toHaveProperty("readParallelism");
  });

  it("spreads a parameter sweep as rows over every replica", () => {
    expect(sweepGrid({ top_p: [0.9, 1], temperature: [0.2, 0.7] })).toEqual([
      { temperature: 0.2, top_p: 0.9 },
      { temperature: 0.2, top_p: 1 },
      { temperature: 0.7, top_p: 0.9 },
      { temperature: 0.7, top_p: 1 },
    ]);
    const plan = new BatchInference({
      kind: "BatchInference",
      name: "b",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      gpus: 4,
      sweep: { temperature: [0.2, 0.7, 1] },
    }).plan(ctx("g5.12xlarge", 1));
    expect(plan.tuning.data.sweep).toMatchObject({ rowsPerPrompt: 3 });
    expect(plan.tuning.data.pool).toMatchObject({
      actorPoolSize: 4,
      gpusPerActor: 1,
      batchSize: plan.memory.maxConcurrentSequences,
    });
  });

  it("writes the data, actor-pool and sweep settings into tuning.json", () => {
    const objects = planStack(repoStack("prod"), { runtime }).objects.find((o) => o.workload === "llm-sweep")!.objects;
    const doc = JSON.parse(
      (objects.find((o) => o.kind === "ConfigMap") as ConfigMap).data["tuning.json"]!,
    ) as TuningDocument;
    expect(doc.data).toMatchObject({
      uri: "s3://example-corpus/prompts/",
      format: "jsonl",
      sampleFraction: 1,
      rowsToRead: 200000,
    });
    expect(doc.actorPool).toMatchObject({ actorPoolSize: 8, gpusPerActor: 1 });
    expect(doc.sweep!.grid).toHaveLength(6);
  });

  it("property: for any pool and encoder, the in-flight working set fits Ray Data's share of the object store (no spill)", () => {
    const encoders = [
      "BAAI/bge-small-en-v1.5",
      "BAAI/bge-base-en-v1.5",
      "BAAI/bge-large-en-v1.5",
      "intfloat/e5-large-v2",
      "sentence-transformers/all-MiniLM-L6-v2",
    ];
    fc.assert(
      fc.property(
        fc.record({
          model: fc.constantFrom(...encoders),
          instanceType: fc.constantFrom("g5.2xlarge" as const, "g5.12xlarge" as const, "g5.48xlarge" as const),
          nodes: fc.integer({ min: 1, max: 4 }),
          avgTextChars: fc.integer({ min: 10, max: 100_000 }),
          rows: fc.integer({ min: 1, max: 100_000_000 }),
        }),
        ({ model, instanceType, nodes, avgTextChars, rows }) => {
          const gpus = nodes * GPU_INSTANCES[instanceType].gpus;
          const plan = new EmbeddingPipeline({
            kind: "EmbeddingPipeline",
            name: "e",
            model,
            gpus,
            dataset: { uri: "s3://my-bucket/d/", rows, avgTextChars },
          }).plan(ctx(instanceType, nodes));
          const d = plan.tuning.data.data;
          // Within Ray Data's default limit, which the plan leaves to Ray.
          expect(d.workingSetBytes).toBeLessThanOrEqual(
            Math.floor(nodes * plan.shape.worker.objectStoreGiB * 2 ** 30 * RAY_DATA_OBJECT_STORE_FRACTION),
          );
          expect(d.blockSizeBytes).toBeGreaterThanOrEqual(2 ** 20);
          expect(d.blockSizeBytes).toBeLessThanOrEqual(128 * 2 ** 20);
          expect(plan.tuning.data.pool.actorPoolSize * plan.tuning.data.pool.gpusPerActor).toBe(gpus);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("the same spec across environments", () => {
  it("property: dev (fewer GPUs) and prod keep the global batch and the hyper-parameters exactly", () => {
    const models = ["meta-llama/Llama-3.2-1B", "Qwen/Qwen2.5-1.5B", "meta-llama/Llama-3.1-8B"];
    fc.assert(
      fc.property(
        fc.record({
          model: fc.constantFrom(...models),
          devNodes: fc.constantFrom(1, 2, 4),
          scale: fc.integer({ min: 1, max: 8 }),
          seq: fc.constantFrom(512, 1024, 2048),
          lora: fc.boolean(),
        }),
        ({ model, devNodes, scale, seq, lora }) => {
          const prodNodes = devNodes * scale;
          const globalBatchSize = 4 * prodNodes * 8;
          const kind = lora ? ("LoRAFineTune" as const) : ("TrainingJob" as const);
          const spec = (gpus: number) => ({ kind, name: "t", model, gpus, sequenceLength: seq, globalBatchSize });
          const run = (environment: "dev" | "prod", nodes: number) => {
            const c = ctx("g5.12xlarge", nodes, environment);
            const s = spec(nodes * 4);
            const w =
              s.kind === "LoRAFineTune"
                ? new LoRAFineTune({ ...s, kind: "LoRAFineTune" })
                : new TrainingJob({ ...s, kind: "TrainingJob" });
            return w.plan(c).memory;
          };
          const dev = run("dev", devNodes);
          const prod = run("prod", prodNodes);
          if (!dev.fits || !prod.fits) return;
          for (const m of [dev, prod])
            expect(m.knobs.microBatchSize * m.knobs.gradientAccumulationSteps * m.knobs.gpus).toBe(globalBatchSize);
          for (const key of ["globalBatchSize", "sequenceLength", "loraRank", "loraAlpha"])
            expect((dev.knobs as Record<string, unknown>)[key]).toBe((prod.knobs as Record<string, unknown>)[key]);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("tuning edge cases", () => {
  it("caps sweeps, and sizes blocks for the expanded rows", () => {
    expect(
      () =>
        new BatchInference({
          kind: "BatchInference",
          name: "b",
          model: "meta-llama/Llama-3.1-8B-Instruct",
          gpus: 1,
          sweep: { a: Array.from({ length: 64 }, (_, i) => i), b: Array.from({ length: 64 }, (_, i) => i) },
        }),
    ).toThrow("the sweep may have at most 1024 combinations");
    const one = new BatchInference({
      kind: "BatchInference",
      name: "b",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      gpus: 4,
    }).plan(ctx("g5.12xlarge", 1));
    const six = new BatchInference({
      kind: "BatchInference",
      name: "b",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      gpus: 4,
      sweep: { temperature: [0.1, 0.5, 1], top_p: [0.9, 1] },
    }).plan(ctx("g5.12xlarge", 1));
    const bytes = (p: typeof one) =>
      p.tuning.decisions.find((d) => d.key === "data.bytesPerRowInFlight")!.value as number;
    expect(bytes(six)).toBe(6 * bytes(one));
    const budget = (p: typeof one) =>
      p.tuning.decisions.find((d) => d.key === "data.rayDataBudgetBytes")!.value as number;
    expect(six.tuning.data.data.workingSetBytes).toBeLessThanOrEqual(budget(six));
  });

  it("keeps blocks at least 1 MiB on small datasets", () => {
    const plan = new EmbeddingPipeline({
      kind: "EmbeddingPipeline",
      name: "e",
      model: "BAAI/bge-large-en-v1.5",
      gpus: 8,
      dataset: { uri: "s3://my-bucket/d/", rows: 50 },
    }).plan(ctx("g5.48xlarge", 1));
    expect(plan.tuning.data.data.blockSizeBytes).toBeGreaterThanOrEqual(2 ** 20);
  });

  it("rejects knob combinations DeepSpeed would refuse", () => {
    const base = { kind: "TrainingJob" as const, name: "t", model: "meta-llama/Llama-3.2-1B", gpus: 4 };
    expect(() => new TrainingJob({ ...base, optimizer: "sgd", offload: "optimizer", zeroStage: 2 })).toThrow(
      'DeepSpeed offloads only its CPU Adam; use optimizer "adamw" or no offload (optimizer is "sgd")',
    );
    expect(() => new TrainingJob({ ...base, strategy: "deepspeed", zeroStage: 0 })).toThrow(
      'strategy "deepspeed" uses ZeRO 1 to 3',
    );
    expect(() => new TrainingJob({ ...base, strategy: "deepspeed", precision: "bf16-true" })).toThrow(
      "DeepSpeed keeps fp32 master weights",
    );
  });

  it("names DeepSpeed's CPU Adam when the plan offloads, and defaults the output to the stack's bucket", () => {
    const plan = new TrainingJob({
      kind: "TrainingJob",
      name: "t",
      model: "meta-llama/Llama-3.1-8B",
      gpus: 8,
      instanceType: "g5.48xlarge",
      sequenceLength: 1024,
    }).plan(ctx("g5.48xlarge", 1));
    expect(plan.memory.knobs.offload).not.toBe("none");
    expect(plan.tuning.train.offloadOptimizerClass).toBe("deepspeed.ops.adam.DeepSpeedCPUAdam");
    const objects = planStack(repoStack("prod"), { runtime }).objects.find(
      (o) => o.workload === "embed-chunks",
    )!.objects;
    const doc = JSON.parse(
      (objects.find((o) => o.kind === "ConfigMap") as ConfigMap).data["tuning.json"]!,
    ) as TuningDocument;
    expect(doc.data!.outputUri).toBe("ray/results/embed-chunks/");
  });
});
