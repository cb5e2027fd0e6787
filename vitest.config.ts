import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { HANG_GUARD_MS } from "./test/helpers/hang-guard";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Compiles dist/ first: tests that run the CLI or pack the package use it.
    globalSetup: ["./test/global-setup.ts"],
    reporters: ["default", "./test/summary-reporter.ts"],
    // Guards against a hang, never the check (test/helpers/hang-guard.ts): no test sets a tighter one.
    testTimeout: HANG_GUARD_MS,
    hookTimeout: HANG_GUARD_MS,
    // Pulumi's mock runtime is process-global: give each test file its own process.
    pool: "forks",
    // One test file per core. Vitest's default for a run is one less than the cores: on CI's 2 cores that ran the files
    // one at a time (395 s here, against 307 s with 2; 3 took 325 s).
    maxWorkers: availableParallelism(),
    minWorkers: 1,
  },
});
