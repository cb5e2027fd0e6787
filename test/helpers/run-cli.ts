/**
 * Runs the real `ray-gpu` binary in a child process, asynchronously: the test worker keeps answering vitest while it
 * runs (a synchronous spawn of a slow command can starve the worker's RPC on a busy machine).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./fixtures";

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `node bin/ray-gpu.js ...args` from the repository root, with `env` added to the process environment. */
export function runCli(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "bin/ray-gpu.js"), ...args], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}
