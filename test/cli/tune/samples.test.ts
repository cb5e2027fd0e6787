/**
 * The samples in examples/tune/ are what `npm run generate` writes (test/cli/tune/samples.ts): the tune stack as the
 * starved run ran it, and the recorded runs with only their plan digest set to the current plan's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../helpers/fixtures";
import { tuneSamples } from "./samples";

const samples = tuneSamples();

describe("the tune samples in examples/tune", () => {
  it.each([...samples])("%s is what npm run generate writes (run it after changing the planner)", (path, text) => {
    expect(readFileSync(join(repoRoot, path), "utf8")).toBe(text);
  });

  it.each(["starved-preprocessing", "dev-embed-chunks"])(
    "%s differs from the run's record only in its digest",
    (name) => {
      const recorded = JSON.parse(readFileSync(join(repoRoot, `test/data/run-records/${name}.json`), "utf8"));
      const sample = JSON.parse(samples.get(`examples/tune/${name}.json`)!);
      expect(sample.workload.planDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect({ ...sample, workload: { ...sample.workload, planDigest: "" } }).toEqual({
        ...recorded,
        workload: { ...recorded.workload, planDigest: "" },
      });
    },
  );
});
