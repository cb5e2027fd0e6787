/**
 * `ray-gpu tune` through the CLI, on a copy of the levers stack: the bound named, the change written as a one-line
 * edit of the stack file, a healthy run left alone, and a record of another plan refused.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RUN_RECORD_API_VERSION } from "../../../core/tune/run-record";
import { repoRoot } from "../../helpers/fixtures";
import { runMain } from "../../helpers/run-main";
import { digestOf, StackFolders, withLine } from "./helpers";

const LEVERS = readFileSync(join(repoRoot, "runtime/e2e/levers-stack/Pulumi.levers.yaml"), "utf8");
const MIB = 2 ** 20;
const folders = new StackFolders();
afterEach(() => folders.removeAll());

/** A folder holding the levers stack with `edit` made to its text. */
const stack = (edit: (text: string) => string = (t) => t) => folders.make("levers", edit(LEVERS));

/** A record of `workload` of the levers stack in `dir` (its current plan's digest, prod) with `sections`. */
function writeRecord(dir: string, file: string, workload: { name: string; kind: string }, sections: object): string {
  const path = join(dir, file);
  const doc = {
    apiVersion: RUN_RECORD_API_VERSION,
    kind: "RunRecord",
    workload: { ...workload, environment: "prod", planDigest: digestOf(dir, "levers", workload.name) },
    source: "runtime",
    recordedAt: "2026-12-03T16:00:00Z",
    ...sections,
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

/**
 * A record of levers-embed: the preprocessing and GPU stages busy for the given seconds of a 100 s run, `spilled`
 * bytes spilled, the worker's store `workerStore` bytes beside the head's 64 MiB.
 */
function record(
  dir: string,
  busy: { preprocess: number; gpu: number; preprocessSlots: number },
  spilled = 0,
  workerStore = 192 * MIB,
) {
  const op = (name: string, stage: string, slots: number, busySeconds: number) => ({
    name,
    stage,
    slots,
    tasks: 16,
    busySeconds,
    rowsOut: 16000,
    maxBlockBytes: 4 * MIB,
  });
  return writeRecord(
    dir,
    "run.json",
    { name: "levers-embed", kind: "EmbeddingPipeline" },
    {
      data: {
        wallSeconds: 100,
        rows: 16000,
        operators: [
          op("ReadParquet", "read", 16, 20),
          op("MapBatches(Tokenize)", "preprocess", busy.preprocessSlots, busy.preprocess),
          op("MapBatches(Embedder)", "gpu", 8, busy.gpu),
        ],
      },
      objectStore: { capacityBytes: workerStore + 64 * MIB, workerCapacityBytes: workerStore, spilledBytes: spilled },
    },
  );
}

const tune = (dir: string, ...args: string[]) => runMain(["tune", "-C", dir, "--stack", "levers", ...args]);
const withSetting = (line: string) => (text: string) => withLine(text, "levers-embed", line);

describe("ray-gpu tune", () => {
  it("names a starved preprocessing pool and writes the plan's own size back as a one-line edit", async () => {
    const dir = stack(withSetting("preprocessConcurrency: 1 # starved on purpose"));
    const before = readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8");
    const run = record(dir, { preprocess: 97, gpu: 150, preprocessSlots: 1 });
    const r = await tune(dir, "--from", run, "--write");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Bound by preprocessing (the CPU tasks that tokenize).");
    expect(r.out).toContain("MapBatches(Tokenize): 1 slot busy 97% of the 100.0 s run");
    expect(r.out).toMatch(/actorPool\.preprocessConcurrency: 1 task -> \d+ tasks/);
    expect(r.out).toContain("-  preprocessConcurrency: 1");
    const after = readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8");
    expect(after).toBe(before.replace("      preprocessConcurrency: 1 # starved on purpose\n", ""));
    // The same record again: the stack's plan is no longer the run's.
    const again = await tune(dir, "--from", run);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(
      /refusing to tune levers-embed: the run's plan is sha256:\w+, .* the stack changed since the run/,
    );
  });

  it("names blocks so large the store spilled and sets the block size the measured store fits", async () => {
    const dir = stack(withSetting("blockSizeMiB: 64"));
    const r = await tune(
      dir,
      "--from",
      record(dir, { preprocess: 500, gpu: 700, preprocessSlots: 16 }, 900 * MIB),
      "--json",
      "--write",
    );
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out);
    expect(result.diagnosis.stage).toBe("objectStore");
    const change = result.diagnosis.changes[0];
    expect(change).toMatchObject({ field: "blockSizeMiB", from: 64 });
    expect(change.to).toBeLessThan(64);
    const mark = "  # set by ray-gpu tune";
    expect(result.diff.slice(2)).toEqual(["-  blockSizeMiB: 64", `+  blockSizeMiB: ${change.to}${mark}`]);
    expect(readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8")).toContain(
      `      blockSizeMiB: ${change.to}${mark}\n`,
    );
  });

  it("takes back its own block size on a later healthy run whose workers' stores fit the plan's blocks", async () => {
    const dir = stack(withSetting("blockSizeMiB: 64"));
    const busy = { preprocess: 500, gpu: 700, preprocessSlots: 16 };
    const spilled = await tune(dir, "--from", record(dir, busy, 900 * MIB), "--write");
    expect(spilled.code).toBe(0);
    const pinned = readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8");
    expect(pinned).toMatch(/ {6}blockSizeMiB: \d+ {2}# set by ray-gpu tune\n/);
    // The next run, on the pinned plan and larger stores: nothing spilled, and the plan's own blocks fit.
    const calm = await tune(dir, "--from", record(dir, busy, 0, 16 * 1024 * MIB), "--write");
    expect(calm.err).toBe("");
    expect(calm.out).toContain("Healthy: the GPU stage bounds the job, at the plan's own settings.");
    expect(calm.out).toContain("taking back ray-gpu tune's own earlier pins, which this run shows unneeded");
    expect(readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8")).toBe(LEVERS);
  });

  it("never takes back a block size the user pinned", async () => {
    const dir = stack(withSetting("blockSizeMiB: 4"));
    const busy = { preprocess: 500, gpu: 700, preprocessSlots: 16 };
    const r = await tune(dir, "--from", record(dir, busy, 0, 16 * 1024 * MIB), "--write");
    expect(r.out).toContain("No change proposed.");
    expect(readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8")).toBe(withSetting("blockSizeMiB: 4")(LEVERS));
  });

  it("proposes no change for a healthy run of the plan's own settings, and writes nothing", async () => {
    const dir = stack();
    const r = await tune(dir, "--from", record(dir, { preprocess: 800, gpu: 760, preprocessSlots: 39 }), "--write");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Healthy: the GPU stage bounds the job, at the plan's own settings.");
    expect(r.out).toContain("No change proposed.");
    expect(readFileSync(join(dir, "Pulumi.levers.yaml"), "utf8")).toBe(LEVERS);
  });

  it("refuses a record of another workload kind or environment", async () => {
    const dir = stack();
    const file = record(dir, { preprocess: 1, gpu: 1, preprocessSlots: 1 });
    const doc = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(
      file,
      JSON.stringify({ ...doc, workload: { ...doc.workload, kind: "BatchInference", environment: "dev" } }),
    );
    const r = await tune(dir, "--from", file);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      "refusing to tune levers-embed: the record is of kind BatchInference, levers-embed is of kind " +
        "EmbeddingPipeline; the record is of a dev run",
    );
  });

  it("refuses a malformed record with every problem and its key path", async () => {
    const dir = stack();
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ apiVersion: "v0", kind: "RunRecord", source: "runtime", extra: 1 }));
    const r = await tune(dir, "--from", file);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${file}: apiVersion`);
    expect(r.err).toContain(`${file}: workload`);
    expect(r.err).toContain(`${file}: extra: unknown key`);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});

describe("ray-gpu tune on a training run", () => {
  /** A record of levers-train: its loop's wait for data and each worker's peak GPU memory. */
  function trainRecord(dir: string, dataWaitFraction: number, peakGiB: number[]) {
    const train = { workers: 4, steps: 100, dataWaitFraction, samplesPerSecond: 30 };
    return writeRecord(
      dir,
      "train.json",
      { name: "levers-train", kind: "TrainingJob" },
      { train, gpuMemory: { peakGiB } },
    );
  }

  it("halves the micro-batch of a run with no GPU memory headroom, keeping the global batch", async () => {
    const dir = stack();
    const r = await tune(dir, "--from", trainRecord(dir, 0.02, [18.2, 21.9, 20.0, 19.5]), "--json");
    expect(r.err).toBe("");
    const result = JSON.parse(r.out);
    expect(result.diagnosis.stage).toBe("gpuMemory");
    const [change] = result.diagnosis.changes;
    expect(change.field).toBe("microBatchSize");
    const micro = result.expected.find((e: { key: string }) => e.key === "knobs.microBatchSize");
    const accumulation = result.expected.find((e: { key: string }) => e.key === "knobs.gradientAccumulationSteps");
    expect(Number(micro.after)).toBe(change.to);
    expect(Number(micro.after) * Number(accumulation.after)).toBe(Number(micro.before) * Number(accumulation.before));
  });

  it("names a loop that waits for data, without a change it cannot make", async () => {
    const dir = stack();
    const r = await tune(dir, "--from", trainRecord(dir, 0.35, [12, 12, 12, 12]));
    expect(r.code).toBe(0);
    expect(r.out).toContain("Bound by the DataLoader (the training loop waits for data).");
    expect(r.out).toContain("No change proposed: the plan already gives the DataLoader every CPU");
  });
});
