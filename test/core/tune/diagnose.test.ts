/** `tune`'s diagnosis: each stage named from the numbers that show it, and the change that lifts it. */
import { describe, expect, it } from "vitest";
import { diagnose, STAGE_ORDER } from "../../../core/tune/diagnose";
import { STAGES, TUNE_PIN_MARK, type TuneFacts } from "../../../core/tune/model";
import { occupancy } from "../../../core/tune/occupancy";
import { RUN_RECORD_API_VERSION, RunRecordSchema, type RunRecord } from "../../../core/tune/run-record";

const MIB = 2 ** 20;
const GIB = 2 ** 30;

/** A Ray Data run of `wallSeconds`: each stage's slots and busy seconds. */
function dataRun(
  busy: { read?: number; preprocess: number; gpu: number },
  slots: { preprocess: number; gpu: number },
  extra: Partial<RunRecord> = {},
): RunRecord {
  const op = (name: string, stage: "read" | "preprocess" | "gpu" | "write", n: number, seconds: number) => ({
    name,
    stage,
    slots: n,
    tasks: 20,
    busySeconds: seconds,
    rowsOut: 20000,
    maxBlockBytes: 2 * MIB,
  });
  return RunRecordSchema.parse({
    apiVersion: RUN_RECORD_API_VERSION,
    kind: "RunRecord",
    workload: { name: "embed", kind: "EmbeddingPipeline", environment: "prod", planDigest: `sha256:${"0".repeat(64)}` },
    source: "runtime",
    recordedAt: "2026-12-03T16:00:00Z",
    data: {
      wallSeconds: 100,
      rows: 20000,
      operators: [
        op("ReadParquet", "read", 16, busy.read ?? 50),
        op("MapBatches(Tokenize)", "preprocess", slots.preprocess, busy.preprocess),
        op("MapBatches(Embedder)", "gpu", slots.gpu, busy.gpu),
        op("Write", "write", 16, 5),
      ],
    },
    objectStore: { capacityBytes: GIB, workerCapacityBytes: GIB, spilledBytes: 0 },
    ...extra,
  });
}

/** The plan's facts: 4 actors, 12 preprocessing tasks by default, 1024-row batches, 8 MiB blocks. */
function facts(
  set: TuneFacts["set"] = {},
  planned: Partial<NonNullable<TuneFacts["data"]>["planned"]> = {},
  pinnedByTune: TuneFacts["pinnedByTune"] = [],
): TuneFacts {
  const p = { actorPoolSize: 4, preprocessConcurrency: 12, batchSize: 1024, blockSizeBytes: 8 * MIB, ...planned };
  return {
    workload: "embed",
    set,
    pinnedByTune,
    data: {
      planned: p,
      defaults: { preprocessConcurrency: 12, batchSize: 1024, blockSizeBytes: 8 * MIB },
      blocksInFlight: 2 * (p.preprocessConcurrency + 2 * p.actorPoolSize),
      workingSetShare: 0.4,
      plannedStoreBytes: 40 * GIB,
    },
  };
}

describe("tune's diagnosis", () => {
  it("has one rule per stage, tried in an order that names every stage once", () => {
    expect([...STAGE_ORDER].sort()).toEqual([...STAGES].sort());
  });

  it("reads each stage's busiest operator as its share of the run, per slot", () => {
    const o = occupancy(dataRun({ preprocess: 95, gpu: 120 }, { preprocess: 1, gpu: 4 }));
    expect(o.preprocess).toEqual({ share: 0.95, operator: "MapBatches(Tokenize)", slots: 1 });
    expect(o.gpu!.share).toBeCloseTo(0.3);
  });

  it("names a starved preprocessing pool, and gives the plan back its own size", () => {
    const d = diagnose(
      dataRun({ preprocess: 95, gpu: 120 }, { preprocess: 1, gpu: 4 }),
      facts({ preprocessConcurrency: 1 }, { preprocessConcurrency: 1 }),
    );
    expect(d).toMatchObject({ stage: "preprocess", healthy: false });
    expect(d.evidence).toEqual([
      "MapBatches(Tokenize): 1 slot busy 95% of the 100.0 s run (a stage binds at 50%)",
      "MapBatches(Embedder): 4 slots busy 30% of the 100.0 s run",
    ]);
    expect(d.changes).toEqual([expect.objectContaining({ field: "preprocessConcurrency", from: 1, to: undefined })]);
  });

  it("names a starved pool already at every CPU without a change, and says what would help", () => {
    const d = diagnose(dataRun({ preprocess: 1150, gpu: 120 }, { preprocess: 12, gpu: 4 }), facts());
    expect(d.stage).toBe("preprocess");
    expect(d.changes).toEqual([]);
    expect(d.note).toMatch(/more CPUs per GPU/);
  });

  it("names the read when it is the busiest stage per slot", () => {
    const d = diagnose(dataRun({ read: 1500, preprocess: 300, gpu: 100 }, { preprocess: 12, gpu: 4 }), facts());
    expect(d).toMatchObject({ stage: "read", changes: [] });
  });

  it("names a tiny encoder batch set by the workload, and gives the GPU the batch its memory fits", () => {
    const d = diagnose(
      dataRun({ preprocess: 200, gpu: 380 }, { preprocess: 12, gpu: 4 }),
      facts({ batchSize: 4 }, { batchSize: 4 }),
    );
    expect(d.stage).toBe("gpu");
    expect(d.healthy).toBe(false);
    expect(d.evidence).toContain("each call embeds 4 rows; the GPU's memory fits 1024");
    expect(d.changes).toEqual([expect.objectContaining({ field: "batchSize", from: 4, to: undefined })]);
  });

  it("sizes blocks to the workers' measured stores when a run spilled, not counting the head's", () => {
    const record = dataRun(
      { preprocess: 200, gpu: 380 },
      { preprocess: 12, gpu: 4 },
      {
        objectStore: { capacityBytes: 2 * GIB, workerCapacityBytes: GIB, spilledBytes: 3 * GIB },
      },
    );
    const d = diagnose(record, facts({ blockSizeMiB: 64 }, { blockSizeBytes: 64 * MIB }));
    expect(d.stage).toBe("objectStore");
    // 2 x (12 + 2 x 4) = 40 blocks in flight; 40% of the workers' 1 GiB / 40 = 10.2 MiB (20.4 MiB with the head's)
    expect(d.changes).toEqual([expect.objectContaining({ field: "blockSizeMiB", from: 64, to: 10 })]);
    expect(d.evidence).toEqual([
      "3.00 GiB spilled to disk; blocks up to 2.0 MiB (planned 64.0 MiB)",
      "the workers' object stores hold 1.00 GiB (2.00 GiB with the head's; the plan counted 40.00 GiB on its workers)",
    ]);
  });

  it("proposes no block change when blocks are already as small as the store fits", () => {
    const record = dataRun(
      { preprocess: 200, gpu: 380 },
      { preprocess: 12, gpu: 4 },
      {
        objectStore: { capacityBytes: GIB, workerCapacityBytes: GIB, spilledBytes: MIB },
      },
    );
    const d = diagnose(record, facts({}, { blockSizeBytes: 2 * MIB }));
    expect(d).toMatchObject({ stage: "objectStore", changes: [] });
    expect(d.note).toMatch(/more memory/);
  });

  it("is healthy, changing nothing, when the GPU stage bounds a run at the plan's own settings", () => {
    const d = diagnose(dataRun({ preprocess: 600, gpu: 370 }, { preprocess: 12, gpu: 4 }), facts());
    expect(d).toMatchObject({ stage: "gpu", healthy: true, changes: [] });
  });

  it("names a training loop that waits for data, and GPU memory without headroom", () => {
    const base = dataRun({ preprocess: 1, gpu: 1 }, { preprocess: 1, gpu: 1 });
    const train = { workers: 4, steps: 100, dataWaitFraction: 0.31, samplesPerSecond: 40 };
    const trainFacts: TuneFacts = {
      workload: "t",
      set: {},
      pinnedByTune: [],
      train: { microBatchSize: 8, defaultMicroBatchSize: 8, usableGiB: 21.99 },
    };
    const waiting = diagnose({ ...base, data: undefined, objectStore: undefined, train }, trainFacts);
    expect(waiting).toMatchObject({ stage: "dataLoader", changes: [] });
    expect(waiting.evidence[0]).toBe(
      "the training loop waits for its next batch 31% of its time (the slowest of 4 workers)",
    );
    const full = diagnose({ ...base, data: undefined, train, gpuMemory: { peakGiB: [20.1, 21.8] } }, trainFacts);
    expect(full.stage).toBe("gpuMemory");
    expect(full.changes).toEqual([expect.objectContaining({ field: "microBatchSize", to: 4 })]);
  });
});

describe("tune's diagnosis, when a pinned setting binds a run that also spilled", () => {
  it("undoes the pinned setting first, and shows the spill as seen too", () => {
    const record = dataRun(
      { preprocess: 97, gpu: 20 },
      { preprocess: 1, gpu: 4 },
      {
        objectStore: { capacityBytes: GIB, workerCapacityBytes: GIB, spilledBytes: GIB / 2 },
      },
    );
    const d = diagnose(record, facts({ preprocessConcurrency: 1 }, { preprocessConcurrency: 1 }));
    expect(d.stage).toBe("preprocess");
    expect(d.changes.map((c) => c.field)).toEqual(["preprocessConcurrency"]);
    expect(d.evidence.at(-1)).toBe("also: 0.50 GiB spilled to disk; blocks up to 2.0 MiB (planned 8.0 MiB)");
  });
});

describe("tune's diagnosis names a bound only with the share that shows it", () => {
  it("calls a run healthy when no stage was busy half the run, and says where the time went", () => {
    // the tune stack's run as planned: tokenizing 21% and the encoders 13% of a 43 s run
    const record = { ...dataRun({ preprocess: 45.6, gpu: 11.1 }, { preprocess: 5, gpu: 2 }) };
    const short = RunRecordSchema.parse({ ...record, data: { ...record.data!, wallSeconds: 43.2 } });
    const d = diagnose(short, facts({}, { preprocessConcurrency: 5 }));
    expect(d).toMatchObject({ stage: "none", healthy: true, changes: [] });
    expect(d.evidence).toEqual([
      "no stage was busy enough to bind the run (a stage binds at 50% of its slots' time):",
      "  ReadParquet: 16 slots busy 7% of the 43.2 s run",
      "  MapBatches(Tokenize): 5 slots busy 21% of the 43.2 s run",
      "  MapBatches(Embedder): 2 slots busy 13% of the 43.2 s run",
      "the rest went to what no stage counts: starting the actors (each loads its model), the first blocks, and waiting between stages",
      "the run lasted 43.2 s, under 120 s: start-up weighs on a run this short; tune the record of a longer run to see its steady state",
    ]);
  });

  it("leaves a pinned pool alone when its stage was busiest but not busy enough to bind", () => {
    const d = diagnose(
      dataRun({ preprocess: 45, gpu: 60 }, { preprocess: 1, gpu: 4 }),
      facts({ preprocessConcurrency: 1 }, { preprocessConcurrency: 1 }),
    );
    expect(d).toMatchObject({ stage: "none", healthy: true, changes: [] });
    expect(d.evidence).toContain("  MapBatches(Tokenize): 1 slot busy 45% of the 100.0 s run");
  });
});

describe("tune takes back its own earlier pins when a later run shows them unneeded", () => {
  const calm = (workerCapacityBytes: number, spilledBytes = 0) =>
    dataRun(
      { preprocess: 200, gpu: 100 },
      { preprocess: 12, gpu: 4 },
      {
        objectStore: { capacityBytes: workerCapacityBytes + GIB, workerCapacityBytes, spilledBytes },
      },
    );

  it("takes back tune's block size once the plan's own blocks fit the workers' stores", () => {
    // 40 blocks in flight x 8 MiB = 320 MiB; 40% of the workers' 1 GiB is 410 MiB
    const d = diagnose(calm(GIB), facts({ blockSizeMiB: 3 }, { blockSizeBytes: 3 * MIB }, ["blockSizeMiB"]));
    expect(d).toMatchObject({ stage: "none", healthy: true });
    expect(d.changes).toEqual([expect.objectContaining({ field: "blockSizeMiB", from: 3, to: undefined })]);
    expect(d.changes[0]!.reason).toMatch(
      /8\.0 MiB blocks, 40 in flight, fit 0\.40 GiB of the workers' measured 1\.00 GiB/,
    );
  });

  it("keeps it while the plan's own blocks would not fit the workers' stores, the head's aside", () => {
    // 40% of 0.5 GiB is 205 MiB < 320 MiB, though the cluster's 1.5 GiB would hold them
    const d = diagnose(calm(GIB / 2), facts({ blockSizeMiB: 3 }, { blockSizeBytes: 3 * MIB }, ["blockSizeMiB"]));
    expect(d.changes).toEqual([]);
  });

  it("keeps it after a run that spilled, and never takes back the user's own pin", () => {
    const pinned = facts({ blockSizeMiB: 3 }, { blockSizeBytes: 3 * MIB }, ["blockSizeMiB"]);
    expect(diagnose(calm(GIB, MIB), pinned).changes.map((c) => c.to)).toEqual([]); // 1 MiB spilled: blocks stay
    expect(diagnose(calm(GIB), facts({ blockSizeMiB: 3 }, { blockSizeBytes: 3 * MIB })).changes).toEqual([]);
  });

  it("takes back tune's micro-batch once the peak, scaled to the plan's, fits with headroom", () => {
    const train = { workers: 4, steps: 100, dataWaitFraction: 0.01, samplesPerSecond: 40 };
    const base = dataRun({ preprocess: 1, gpu: 1 }, { preprocess: 1, gpu: 1 });
    const run = (peakGiB: number) => ({ ...base, data: undefined, train, gpuMemory: { peakGiB: [peakGiB] } });
    const halved: TuneFacts = {
      workload: "t",
      set: { microBatchSize: 4 },
      pinnedByTune: ["microBatchSize"],
      train: { microBatchSize: 4, defaultMicroBatchSize: 8, usableGiB: 22 },
    };
    expect(diagnose(run(10), halved).changes).toEqual([
      expect.objectContaining({ field: "microBatchSize", from: 4, to: undefined }),
    ]);
    expect(diagnose(run(11.5), halved).changes).toEqual([]); // x2 = 23 GiB > 97% of 22 GiB
  });

  it("marks its pins with one comment text, which the stack edit writes and reads", () => {
    expect(TUNE_PIN_MARK).toBe("set by ray-gpu tune");
  });
});

describe("the run record's object stores", () => {
  it("refuses workers' stores larger than the cluster's, naming the key", () => {
    const record = dataRun({ preprocess: 1, gpu: 1 }, { preprocess: 1, gpu: 1 });
    const bad = { ...record, objectStore: { capacityBytes: GIB, workerCapacityBytes: 2 * GIB, spilledBytes: 0 } };
    const parsed = RunRecordSchema.safeParse(bad);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => [i.path.join("."), i.message])).toEqual([
      [
        "objectStore.workerCapacityBytes",
        "must be at most capacityBytes: the workers' stores are part of the cluster's",
      ],
    ]);
  });
});
