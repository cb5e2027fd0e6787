/**
 * Builds dist/ (and the CLI's bundle) once before the tests: the CLI tests, the docs' runnable blocks and the package tests run the compiled
 * CLI and library, which must match the sources under test.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

export default function setup(): void {
  const root = resolve(__dirname, "..");
  execFileSync(process.execPath, [resolve(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
  execFileSync(process.execPath, [resolve(root, "scripts/bundle-cli.mjs")], { cwd: root, stdio: "inherit" });
}
