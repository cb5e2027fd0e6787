/**
 * Runs the real `ray-gpu` binary in a child process, asynchronously: the test worker keeps answering vitest while it
 * runs (a synchronous spawn of a slow command can starve the worker's RPC on a busy machine).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "./fixtures";

export interface CliResult {
  readonly status: number | null;
  /** The signal that ended the process (`SIGTERM` when `timeoutMs` ran out), or null. */
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where and how long the CLI runs. */
export interface RunCliOptions {
  /** @default the repository root */
  readonly cwd?: string;
  /** Kill the process after this long (a hang detector, never a timing assertion). @default no limit */
  readonly timeoutMs?: number;
}

/** `node bin/ray-gpu.js ...args`, with `env` added to the process environment. */
export function runCli(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  options: RunCliOptions = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "bin/ray-gpu.js"), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, ...env },
      ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}
