/** What every command writes to, and the exit codes: a stable contract for scripts. */

/** Exit codes of the CLI: 3 is `diff --fail-on` when a rule fired. */
export const EXIT = { ok: 0, invalidInput: 1, usage: 2, failOn: 3 } as const;

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

export const defaultIo = (): Io => ({
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  cwd: process.cwd(),
  ...(process.stderr.isTTY ? { progress: (s: string) => void process.stderr.write(`ray-gpu: ${s}\n`) } : {}),
});

/** What a command's action may use: the output, the global `--dir`, and a way to set the exit code. */
export interface CommandContext {
  readonly io: Io;
  readonly dir: () => string;
  readonly setCode: (code: number) => void;
}

/** A usage problem: unknown stack, missing flag (exit 2). */
export class UsageError extends Error {}
