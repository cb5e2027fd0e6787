/** Timing helpers of the benchmarks: wall time of whole processes, medians over repeated runs. */
import { spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";

/** The median of `xs`. */
export function median(xs: readonly number[]): number {
  const s = xs.toSorted((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A process to time: the executable and its arguments. */
export type Run = readonly [command: string, args: readonly string[]];

/** Wall time in seconds of one run of `run`; fails loudly if the process fails. */
export function once([command, args]: Run, okStatus: readonly number[] = [0]): number {
  const t0 = performance.now();
  const r = spawnSync(command, args, { encoding: "utf8", maxBuffer: 256 * 2 ** 20 });
  if (!okStatus.includes(r.status ?? -1))
    throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return (performance.now() - t0) / 1000;
}

/** Median wall time in seconds of `runs` runs of a process (after one warm-up run). */
export function timeCommand(run: Run, runs: number, okStatus: readonly number[] = [0]): number {
  once(run, okStatus);
  return median(Array.from({ length: runs }, () => once(run, okStatus)));
}

/**
 * Two processes timed in alternation (a, b, a, b, …, after one warm-up run of each), so that a busy spell of the
 * machine slows both alike: the median of each and the median of the per-pair ratios a / b.
 */
export function timePair(a: Run, b: Run, runs: number): { a: number; b: number; ratio: number } {
  once(a);
  once(b);
  const pairs = Array.from({ length: runs }, () => [once(a), once(b)] as const);
  return {
    a: median(pairs.map(([x]) => x)),
    b: median(pairs.map(([, y]) => y)),
    ratio: median(pairs.map(([x, y]) => x / y)),
  };
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n");
}
