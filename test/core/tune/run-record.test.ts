/**
 * A run record is read only when its numbers can be true and agree with each other: a date that exists, a run of a
 * millisecond to 30 days, slots a cluster can have, a GPU peak a GPU can hold, each operator once, none busier than
 * its slots, and a GPU stage where the kind runs one. Anything else is refused by path before any diagnosis.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RunRecordSchema } from "../../../core/tune/run-record";
import { repoRoot } from "../../helpers/fixtures";

type Raw = {
  recordedAt: string;
  workload: { kind: string };
  data: { wallSeconds: number; operators: { name: string; stage: string; slots: number; busySeconds: number }[] };
  gpuMemory?: { peakGiB: number[] };
};

/** A recorded run (the starved-preprocessing record), changed by `edit`; the paths and messages of its problems. */
function problems(edit: (r: Raw) => void): string[] {
  const raw = JSON.parse(readFileSync(join(repoRoot, "test/data/run-records/starved-preprocessing.json"), "utf8"));
  edit(raw);
  const r = RunRecordSchema.safeParse(raw);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

describe("a run record's grammar and consistency", () => {
  it("reads every recorded run as it is", () => {
    for (const name of ["as-planned", "dev-embed-chunks", "huge-blocks", "starved-preprocessing", "tiny-batch"]) {
      const raw = JSON.parse(readFileSync(join(repoRoot, `test/data/run-records/${name}.json`), "utf8"));
      expect(RunRecordSchema.safeParse(raw).success, name).toBe(true);
    }
  });

  it("refuses dates that do not exist, and a time that is not RFC 3339", () => {
    for (const date of ["2026-02-30T10:00:00Z", "2026-12-03T25:00:00Z", "2026-12-03 16:10:45Z", "yesterday"])
      expect(problems((r) => (r.recordedAt = date)).join("\n"), date).toMatch(/^recordedAt: /);
  });

  it("refuses wall times, slots and GPU peaks no run can have", () => {
    for (const wall of [1e-300, 0, 1e308, 31 * 24 * 3600])
      expect(
        problems((r) => (r.data.wallSeconds = wall)).some((p) => p.startsWith("data.wallSeconds: ")),
        String(wall),
      ).toBe(true);
    expect(problems((r) => (r.data.operators[0]!.slots = 1e9))[0]).toMatch(/^data\.operators\.0\.slots: /);
    expect(problems((r) => (r.gpuMemory = { peakGiB: [12, 1e6] }))[0]).toMatch(/^gpuMemory\.peakGiB\.1: /);
  });

  it("refuses an operator named twice, one busier than its slots, and an embedding run with no GPU stage", () => {
    expect(problems((r) => r.data.operators.push({ ...r.data.operators[3]! }))).toEqual([
      "data.operators.6.name: names the same operator as operators[3]",
    ]);
    expect(problems((r) => (r.data.operators[3]!.busySeconds = 1e6))[0]).toMatch(
      /^data\.operators\.3\.busySeconds: is more than its 1 slots could work in the 51\.773563 s run/,
    );
    expect(problems((r) => (r.data.operators = r.data.operators.filter((o) => o.stage !== "gpu")))).toEqual([
      "data.operators: holds no gpu-stage operator, which every EmbeddingPipeline pipeline runs: the record is not of this kind's run",
    ]);
  });
});
