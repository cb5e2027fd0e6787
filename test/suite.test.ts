/**
 * Rules for the test suite itself. Tests must not flake on a shared, sometimes slow machine: no test reads the clock
 * (timing lives in bench/, reported, never asserted).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "./helpers/fixtures";

/** Test sources under `dir`, recursively (snapshots and the consumer fixture's dependencies excluded). */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = join(dir, e.name);
    if (e.isDirectory()) return e.name === "node_modules" || e.name === "__snapshots__" ? [] : sources(full);
    return /\.(ts|js|cjs|mjs)$/.test(e.name) ? [full] : [];
  });
}

const CLOCK = /\b(Date\.now|performance\.now|process\.hrtime|new Date\(\)\.getTime)\b/;

describe("the test suite", () => {
  it("reads no wall clock: durations are measured in bench/, not asserted in tests", () => {
    const self = join(repoRoot, "test/suite.test.ts");
    const offenders = sources(join(repoRoot, "test"))
      .filter((f) => f !== self && CLOCK.test(readFileSync(f, "utf8")))
      .map((f) => relative(repoRoot, f));
    expect(offenders).toEqual([]);
  });
});
