/**
 * The forecast against published runs (./published-runs.ts, sources there and in docs/forecast.md): each prediction
 * within ±25% of what its source measured, and the table in docs/forecast.md the one these cases generate.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FORECAST_BEGIN, FORECAST_END, sectionOf } from "../../../scripts/generate";
import { repoRoot } from "../../helpers/fixtures";
import { PUBLISHED_RUNS, publishedForecastTable, TOLERANCE } from "./published-runs";

describe("forecast throughput vs published runs", () => {
  it("holds at least 20 runs from at least 5 sources", () => {
    expect(PUBLISHED_RUNS.length).toBeGreaterThanOrEqual(20);
    const sources = new Set(PUBLISHED_RUNS.map((r) => r.source.split(/[@ ]/)[0]));
    expect(sources.size).toBeGreaterThanOrEqual(5);
  });

  it.each(PUBLISHED_RUNS.map((r) => [r.id, r] as const))("%s", (_, r) => {
    const ratio = r.predicted() / r.measured;
    expect(ratio).toBeGreaterThanOrEqual(TOLERANCE[0]);
    expect(ratio).toBeLessThanOrEqual(TOLERANCE[1]);
  });
});

describe("docs/forecast.md", () => {
  it("shows the table generated from these runs (run npm run generate after changing them or the model)", () => {
    const doc = readFileSync(join(repoRoot, "docs/forecast.md"), "utf8");
    expect(sectionOf(doc, FORECAST_BEGIN, FORECAST_END)).toBe(publishedForecastTable());
  });
});
