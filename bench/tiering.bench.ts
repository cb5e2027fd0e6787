/**
 * Benchmark (not a test): what the CLI's interrupt budget (bin/ray-gpu.js sets V8's `--interrupt-budget` before it
 * compiles the bundle) saves. `npm run bench:tiering` builds, then makes a copy of the binary without that line, whose
 * code cache it makes the way the build does (one render of the dev stack), so each copy starts from a cache made under
 * its own flags. Both render the generated prod stacks of bench/render.bench.ts, alternating run by run (into the
 * previous output, as a re-render does), measured alike by bench/usage.cjs (CPU seconds of every thread, peak RSS):
 * medians, and the median of per-pair CPU ratios. `BENCH_SIZES` (default 100,1000,5000), `BENCH_RUNS` (default 7; 3
 * at 5,000 workloads).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { benchStackFile } from "./kinds";
import { loadAverages, machineDescription, median, once, table, usageOf, type ProcessUsage, type Run } from "./measure";

const root = resolve(__dirname, "..");
const work = mkdtempSync(join(tmpdir(), "ray-gpu-tiering-bench-"));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 7);
const SIZES = (process.env["BENCH_SIZES"] ?? "100,1000,5000").split(",").map(Number);
/** The statement of bin/ray-gpu.js that sets the budget; the copy leaves it out. */
const BUDGET_LINE = /^if \(!process\.execArgv\.some\(\(a\) => a\.startsWith\("--interrupt-budget"\)\)\)\n.*\n/m;

/** A copy of the binary and bundle without the budget, its own code cache made as the build makes it. */
function defaultBudgetCopy(): string {
  const copy = join(work, "default-budget");
  const source = readFileSync(join(root, "bin/ray-gpu.js"), "utf8");
  if (!BUDGET_LINE.test(source)) throw new Error("bin/ray-gpu.js no longer sets the budget as this bench expects");
  mkdirSync(join(copy, "bin"), { recursive: true });
  mkdirSync(join(copy, "dist/cli/bin"), { recursive: true });
  writeFileSync(join(copy, "bin/ray-gpu.js"), source.replace(BUDGET_LINE, ""));
  copyFileSync(join(root, "dist/cli/bin/main.cjs"), join(copy, "dist/cli/bin/main.cjs"));
  copyFileSync(join(root, "package.json"), join(copy, "package.json"));
  symlinkSync(join(root, "runtime"), join(copy, "runtime"), "dir");
  const cache = join(copy, "dist/cli/bin/main.cjs.cache");
  process.env["RAY_GPU_BUILD_CODE_CACHE"] = cache;
  try {
    once([
      process.execPath,
      [join(copy, "bin/ray-gpu.js"), "-C", root, "render", "--stack", "dev", "--out", join(work, "cache-run")],
    ]);
  } finally {
    delete process.env["RAY_GPU_BUILD_CODE_CACHE"];
  }
  return join(copy, "bin/ray-gpu.js");
}

/** One run of a node script under bench/usage.cjs. */
const measured = (run: Run): ProcessUsage => usageOf(run, join(work, "usage.jsonl"));

/** Both binaries rendering `n` workloads, alternating: medians and the median per-pair CPU ratio. */
function row(n: number, defaultBin: string): string[] {
  writeFileSync(join(work, `Pulumi.bench-${n}.yaml`), benchStackFile(n));
  const render = (bin: string, out: string): Run => [
    bin,
    ["-C", work, "render", "--stack", `bench-${n}`, "--out", out],
  ];
  const ours = render(join(root, "bin/ray-gpu.js"), join(work, `budget-${n}`));
  const theirs = render(defaultBin, join(work, `default-${n}`));
  measured(ours);
  measured(theirs);
  const runs = n >= 5000 ? Math.min(RUNS, 3) : RUNS;
  const rounds = Array.from({ length: runs }, () => [measured(ours), measured(theirs)] as const);
  const m = (pick: (r: readonly [ProcessUsage, ProcessUsage]) => number) => median(rounds.map(pick));
  return [
    String(n),
    m((r) => r[0].cpuS).toFixed(3),
    m((r) => r[1].cpuS).toFixed(3),
    m((r) => r[0].cpuS / r[1].cpuS).toFixed(2),
    m((r) => r[0].peakRssMiB).toFixed(0),
    m((r) => r[1].peakRssMiB).toFixed(0),
  ];
}

console.log(`render with the CLI's interrupt budget and with V8's default, ${new Date().toISOString().slice(0, 10)}`);
console.log(`on ${machineDescription()}, load ${loadAverages()}\n`);
try {
  const defaultBin = defaultBudgetCopy();
  const header = ["workloads", "budget CPU s", "default CPU s", "budget / default", "budget MiB", "default MiB"];
  console.log(
    table(
      header,
      SIZES.map((n) => row(n, defaultBin)),
    ),
  );
  console.log(`\nload at the end: ${loadAverages()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
