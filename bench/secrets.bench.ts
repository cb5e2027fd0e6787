/**
 * Benchmark (not a test): the secret checks on values of 40 kB to 4 MiB (the most a stack file may hold) built on the
 * worst cases of the patterns they replaced (a run of letters, `sk-` repeated, `--a-` repeated, many short flags),
 * and those patterns themselves on the 40 kB values (the reference of test/core/config/secret-scan.test.ts); in
 * process, medians of `BENCH_RUNS` runs (default 5) after one warm-up. Run: `npm run bench:secrets`.
 */
import { availableParallelism, cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { secretInCommand, secretLooking } from "../core/config/secrets";
import { median, table } from "./measure";

const RUNS = Number(process.env["BENCH_RUNS"] ?? 5);
const UNITS = ["a", "sk-", "--a-", "--hf_tok x "];

/** `unit` repeated to exactly `bytes` characters. */
const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);

/** Median milliseconds of `f` over the runs, after a warm-up. */
function ms(f: () => unknown): number {
  f();
  const times = Array.from({ length: RUNS }, () => {
    const start = performance.now();
    f();
    return performance.now() - start;
  });
  return median(times);
}

/** The patterns the checks replaced, on the 40 kB values: `credentialIn`'s URL and token patterns. */
const OLD = [/[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@/i, /(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{20,})(?![A-Za-z0-9])/];

function main(): void {
  const rows: string[][] = [];
  for (const unit of UNITS)
    for (const bytes of [40_000, 4 * 1024 * 1024]) {
      const text = fill(unit, bytes);
      const oldMs = bytes === 40_000 ? ms(() => OLD.map((p) => p.test(text))).toFixed(1) : "-";
      const env = ms(() => secretLooking("X", text));
      const command = ms(() => secretInCommand(text));
      rows.push([JSON.stringify(unit), String(bytes), env.toFixed(1), command.toFixed(1), oldMs]);
    }
  const head = ["repeated", "bytes", "env value, ms", "entrypoint, ms", "old patterns, ms"];
  console.log(`${cpus()[0]?.model ?? "cpu"}, ${availableParallelism()} CPUs, load ${loadavg()[0]!.toFixed(1)}`);
  console.log(table(head, rows));
}

main();
