/**
 * Builds dist/ (and the CLI's bundle) before the tests, unless it was built from exactly these sources
 * (`scripts/build-stamp.mjs`): the CLI tests, the docs' runnable blocks and the package tests run the compiled CLI and
 * library, which must match the sources under test. Skipping an up-to-date build also means a process running the CLI
 * beside the tests (CI runs npm test and npm run test:ray at once) never sees dist/ half rewritten.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * Also sets `RAY_GPU_PREVIEW_CACHE` for every test file (cli/diff/preview-child.ts): the `diff` tests preview the
 * unchanged prod stack as their base in almost every case, and the program runs once per stack file and build.
 * Returns the teardown that removes the folder.
 */
export default function setup(): () => void {
  build();
  const cache = mkdtempSync(join(tmpdir(), "ray-gpu-preview-cache-"));
  process.env["RAY_GPU_PREVIEW_CACHE"] = cache;
  return () => rmSync(cache, { recursive: true, force: true });
}

function build(): void {
  const root = resolve(__dirname, "..");
  const stamp = resolve(root, "scripts/build-stamp.mjs");
  if (spawnSync(process.execPath, [stamp, "check"], { cwd: root }).status === 0) return;
  execFileSync(process.execPath, [resolve(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
  execFileSync(process.execPath, [resolve(root, "scripts/bundle-cli.mjs")], { cwd: root, stdio: "inherit" });
  execFileSync(process.execPath, [stamp, "write"], { cwd: root, stdio: "inherit" });
}
