/**
 * Timing helpers of the benchmarks: wall time of whole processes, or wall and CPU time (user + system, the process and
 * every process it starts), medians over repeated runs.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { delimiter, join } from "node:path";
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

/** Where and how a process runs: its working folder and environment (default: ours). */
export interface RunOptions {
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Wall and CPU seconds of one run; CPU is user + system time of the process and all its descendants. */
export interface Cost {
  readonly wallS: number;
  readonly cpuS: number;
}

/**
 * bash's `time` keyword: getrusage(RUSAGE_CHILDREN) before and after, so the CPU of `npx`, the shell it starts and the
 * node it runs all count, to the millisecond. The command's stdout is dropped, its stderr kept for the error message;
 * the timing line goes to bash's stdout.
 */
const TIMED = 'TIMEFORMAT="%3R %3U %3S"; { time "$@" >/dev/null 2>&3; } 3>&2 2>&1';

/** Wall and CPU seconds of one run of `run`; fails loudly if the process fails. */
export function costOnce([command, args]: Run, options: RunOptions = {}): Cost {
  const r = spawnSync("bash", ["-c", TIMED, "bash", command, ...args], { ...options, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const [wallS, userS, sysS] = r.stdout.trim().split(/\s+/).map(Number);
  if (wallS === undefined || userS === undefined || sysS === undefined || Number.isNaN(wallS + userS + sysS))
    throw new Error(`unreadable timing of ${command}: ${r.stdout}`);
  return { wallS, cpuS: userS + sysS };
}

/** A process of a round: how to run it and where. */
export interface Variant {
  readonly run: Run;
  readonly options?: RunOptions;
}

/** Per variant: median wall and CPU seconds, and the median of its per-round CPU ratio to the first variant. */
export interface RoundsResult extends Cost {
  readonly cpuRatio: number;
}

/**
 * Variants timed in rounds (each once per round, in order, after one warm-up run of each), so that a busy spell of the
 * machine slows all alike: medians of each, and the median of the per-round CPU ratios to the first variant.
 */
export function costRounds(variants: readonly Variant[], runs: number): RoundsResult[] {
  for (const v of variants) costOnce(v.run, v.options);
  const rounds = Array.from({ length: runs }, () => variants.map((v) => costOnce(v.run, v.options)));
  return variants.map((_, i) => ({
    wallS: median(rounds.map((r) => r[i]!.wallS)),
    cpuS: median(rounds.map((r) => r[i]!.cpuS)),
    cpuRatio: median(rounds.map((r) => r[i]!.cpuS / r[0]!.cpuS)),
  }));
}

/**
 * Our environment as a user's shell has it: without what `npm run` adds (npm_* settings such as npm_config_yes, NODE,
 * INIT_CWD, and node_modules/.bin folders on PATH), which would change how a child `npx` or `npm` behaves; plus `extra`.
 */
export function userEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const added = (key: string) => /^npm_/i.test(key) || key === "NODE" || key === "INIT_CWD";
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !added(key)));
  const path = (env["PATH"] ?? "").split(delimiter).filter((dir) => !/node_modules[\\/]\.bin$|node-gyp-bin$/.test(dir));
  return { ...env, PATH: path.join(delimiter), ...extra };
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n");
}

/** The machine a benchmark runs on, for its header: cores, CPU model and Node version. */
export const machineDescription = (): string =>
  `${availableParallelism()} CPU(s), ${cpus()[0]?.model ?? "unknown CPU"}, Node ${process.version}`;

/** The load averages over 1, 5 and 15 minutes, as `1.23, 0.98, 0.75`. */
export const loadAverages = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(", ");

/** A node process's own use, as bench/usage.cjs records it at exit. */
export interface ProcessUsage {
  /** CPU seconds, user + system, of every thread (the garbage collector's included). */
  readonly cpuS: number;
  /** Peak resident memory (`ru_maxrss`). */
  readonly peakRssMiB: number;
}

/** bench/usage.cjs, which a measured node process preloads. */
const USAGE_PRELOAD = join(__dirname, "usage.cjs");

/**
 * One run of the node script `run` (script and arguments) with bench/usage.cjs preloaded, so every script is measured
 * alike; `file` is where usage.cjs writes (replaced each run). Fails loudly if the process fails.
 */
export function usageOf([script, args]: Run, file: string): ProcessUsage {
  rmSync(file, { force: true });
  const r = spawnSync(process.execPath, ["-r", USAGE_PRELOAD, script, ...args], {
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
    env: { ...process.env, BENCH_USAGE_FILE: file },
  });
  if (r.status !== 0) throw new Error(`${script} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(readFileSync(file, "utf8").trim()) as ProcessUsage;
}
