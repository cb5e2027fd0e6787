import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Compiles dist/ first: tests that run the CLI or pack the package use it.
    globalSetup: ["./test/global-setup.ts"],
    reporters: ["default", "./test/summary-reporter.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Pulumi's mock runtime is process-global: give each test file its own process.
    pool: "forks",
  },
});
