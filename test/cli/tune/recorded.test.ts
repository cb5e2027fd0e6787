/**
 * `ray-gpu tune` on runs recorded on real Ray (test/data/run-records: the tune stack's embedding job with each bad
 * setting and as planned, and the dev stack's embedding job, run on local Ray clusters by runtime/e2e/tune_loop.py
 * and test_job_runs.py on 2026-12-03). Each record's plan digest is the plan's at recording time; these tests are about
 * the diagnosis of the numbers Ray measured, so the digest is set to the stack's current plan before tune reads it.
 * `objectStore.workerCapacityBytes` (added to the record on 2026-12-04) was written into these records from the
 * harness's store sizes, the one number the runtime did not yet report: the tune stack's worker store is 80 MiB
 * (13 GiB / 256, raised to Ray's 80 MiB least; runtime/e2e/tune_loop.py), the dev job's 832 MiB (13 GiB / 16;
 * runtime/e2e/cluster.py); each record's `capacityBytes` is that plus the head's store, as Ray measured it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../../helpers/fixtures";
import { runMain } from "../../helpers/run-main";
import { codeBlocks } from "../../docs/markdown";
import { digestOf, StackFolders, withLine } from "./helpers";

const TUNE_STACK = readFileSync(join(repoRoot, "runtime/e2e/tune-stack/Pulumi.tune.yaml"), "utf8");
const RECORDS = join(repoRoot, "test/data/run-records");
const folders = new StackFolders();
afterEach(() => folders.removeAll());

/** `tune` (text, or `--json`) on the recorded run `name`, against `dir`'s `stack`, the digest set to the current plan's. */
async function tuneRecordedText(name: string, dir: string, stack: string, ...flags: string[]) {
  const record = JSON.parse(readFileSync(join(RECORDS, `${name}.json`), "utf8"));
  record.workload.planDigest = digestOf(dir, stack, record.workload.name);
  const file = join(dir, "run.json");
  writeFileSync(file, JSON.stringify(record));
  const r = await runMain(["tune", "-C", dir, "--stack", stack, "--from", file, ...flags]);
  expect(r.err).toBe("");
  return r.out;
}

/** `tune --json` on the recorded run `name`, against `dir`'s `stack`, the record's digest set to the current plan's. */
async function tuneRecorded(name: string, dir: string, stack: string) {
  return JSON.parse(await tuneRecordedText(name, dir, stack, "--json")) as {
    diagnosis: { stage: string; healthy: boolean; evidence: string[]; changes: { field: string; to?: number }[] };
  };
}

describe("ray-gpu tune on runs recorded on real Ray", () => {
  it.each([
    ["starved-preprocessing", "preprocessConcurrency: 1", "preprocess", "preprocessConcurrency"],
    ["tiny-batch", "batchSize: 4", "gpu", "batchSize"],
    ["huge-blocks", "blockSizeMiB: 96", "objectStore", "blockSizeMiB"],
  ])("%s: names the stage its setting (%s) binds, and changes that setting", async (name, line, stage, field) => {
    const dir = folders.make("tune", withLine(TUNE_STACK, "embed-tune", line));
    const { diagnosis } = await tuneRecorded(name, dir, "tune");
    expect(diagnosis.stage).toBe(stage);
    expect(diagnosis.changes.map((c) => c.field)).toEqual([field]);
  });

  it("sizes the blocks of the spilled run to the worker's measured 80 MiB store, not the head's", async () => {
    const dir = folders.make("tune", withLine(TUNE_STACK, "embed-tune", "blockSizeMiB: 96"));
    const { diagnosis } = await tuneRecorded("huge-blocks", dir, "tune");
    // 40% of the worker's 80 MiB over 2 x (5 tasks + 2 actors x 2) = 18 blocks in flight: 1.8 MiB (3.6 MiB had the
    // head's 80 MiB counted, where no block of the pipeline lives)
    expect(diagnosis.changes[0]!.to).toBe(1);
    expect(diagnosis.evidence[1]).toBe(
      "the workers' object stores hold 0.08 GiB (0.16 GiB with the head's; the plan counted 13.00 GiB on its workers)",
    );
  });

  it("shows the spill a starved pool queued up, beside the pool it undoes", async () => {
    const dir = folders.make("tune", withLine(TUNE_STACK, "embed-tune", "preprocessConcurrency: 1"));
    const { diagnosis } = await tuneRecorded("starved-preprocessing", dir, "tune");
    expect(diagnosis.evidence.at(-1)).toMatch(/^also: 0\.06 GiB spilled to disk/);
  });

  it("names no bound on the tune stack's job run as planned (its busiest stage 21%), and changes nothing", async () => {
    const dir = folders.make("tune", TUNE_STACK);
    const { diagnosis } = await tuneRecorded("as-planned", dir, "tune");
    expect(diagnosis).toMatchObject({ stage: "none", healthy: true, changes: [] });
    expect(diagnosis.evidence).toContain("  MapBatches(Tokenize): 5 slots busy 21% of the 43.2 s run");
    expect(diagnosis.evidence.at(-1)).toMatch(/^the run lasted 43\.2 s, under 120 s/);
  });

  it("names no bound on the dev stack's embedding job run as planned (its busiest stage 45%)", async () => {
    const dir = folders.make("dev", readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8"));
    const { diagnosis } = await tuneRecorded("dev-embed-chunks", dir, "dev");
    expect(diagnosis).toMatchObject({ stage: "none", healthy: true, changes: [] });
    expect(diagnosis.evidence).toContain("  MapBatches(Tokenize): 6 slots busy 45% of the 175.6 s run");
  });

  it("names the bound of each bad setting's run only with a share that shows it", async () => {
    for (const [name, line] of [
      ["starved-preprocessing", "preprocessConcurrency: 1"],
      ["tiny-batch", "batchSize: 4"],
    ] as const) {
      const dir = folders.make("tune", withLine(TUNE_STACK, "embed-tune", line));
      const { diagnosis } = await tuneRecorded(name, dir, "tune");
      expect(diagnosis.evidence[0]).toMatch(/ busy 67% of the [\d.]+ s run \(a stage binds at 50%\)$/);
    }
  });

  it("prints what docs/tune.md shows for the run as planned", async () => {
    // The worked example of the starved pool runs as the page prints it: test/docs/commands.test.ts.
    const shown = codeBlocks("docs/tune.md")
      .filter((b) => b.info.includes("text"))
      .map((b) => b.body);
    const planned = folders.make("tune", TUNE_STACK);
    const healthy = await tuneRecordedText("as-planned", planned, "tune");
    expect(shown.some((b) => b.startsWith("Healthy:") && healthy.includes(b))).toBe(true);
  });
});
