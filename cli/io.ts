/** What every command writes to, and the exit codes: a stable contract for scripts. */
import { writeSync } from "node:fs";

/**
 * Exit codes of the CLI: 3 is `diff --fail-on` when a rule fired; 74 (sysexits' EX_IOERR) is standard output or error
 * that could not be written (a full device, a pipe closed by its reader).
 */
export const EXIT = { ok: 0, invalidInput: 1, usage: 2, failOn: 3, outputFailed: 74 } as const;

/** Where a command writes, and the folder it runs in (tests pass their own). */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
  /**
   * Where a slow command says what it is doing (a line each step), so a person at a terminal is not left looking
   * at nothing for tens of seconds.
   * @default - standard error when it is a terminal; nowhere otherwise (pipes, CI logs and tests stay clean)
   */
  progress?: (s: string) => void;
}

/**
 * Ends the process with one line and {@link EXIT.outputFailed} when standard output or error fails (ENOSPC, EPIPE,
 * EBADF): Node reports such a failure as an `error` event on the stream, which left alone prints a stack trace.
 */
export function guardStandardStreams(): void {
  const guard = (name: string) => (err: NodeJS.ErrnoException) => {
    const line = `ray-gpu: cannot write standard ${name} (${err.code ?? err.message}); the output is incomplete\n`;
    try {
      if (name !== "error") writeSync(2, line);
    } catch {
      // Standard error is gone too: the exit code says it.
    }
    process.exit(EXIT.outputFailed);
  };
  if (process.stdout.listenerCount("error") === 0) process.stdout.on("error", guard("output"));
  if (process.stderr.listenerCount("error") === 0) process.stderr.on("error", guard("error"));
}

/** The process's standard streams (guarded: see {@link guardStandardStreams}). */
export const defaultIo = (): Io => {
  guardStandardStreams();
  return {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    cwd: process.cwd(),
    ...(process.stderr.isTTY ? { progress: (s: string) => void process.stderr.write(`ray-gpu: ${s}\n`) } : {}),
  };
};

/** What a command's action may use: the output, the global `--dir`, and a way to set the exit code. */
export interface CommandContext {
  readonly io: Io;
  readonly dir: () => string;
  readonly setCode: (code: number) => void;
}

/** A usage problem: unknown stack, missing flag (exit 2). */
export class UsageError extends Error {}
