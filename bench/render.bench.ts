/**
 * Benchmark (not a test): `ray-gpu render` (compiled; `npm run bench:render` builds first) of generated stacks of 10 to
 * 5,000 workloads next to cdk8s synthesizing the very same objects, one YAML file each (`bench/cdk8s-synth.js`). Both
 * are whole node processes measured alike (bench/usage.cjs: CPU seconds of every thread, and peak RSS), alternating run
 * by run so a busy spell slows both: medians and the median of per-pair CPU ratios. Two cases:
 * - again: each writes into its folder of the previous run (a re-render after a change; cdk8s overwrites its files);
 * - first: each writes into a new folder (removed between runs, outside the measure).
 * Then, in this process, where render's CPU goes at each size: reading the stack file, planning (the deploy simulation's
 * scheduling check within it) and making the objects' text. `BENCH_RUNS` (default 5; 3 at 5,000 workloads).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parse } from "yaml";
import { planStackFile } from "../cli/input/stack-file";
import { stableYaml } from "../core/serialize";
import { loadRuntimePackage } from "../io/runtime-package";
import { benchStackFile } from "./kinds";
import { loadAverages, machineDescription, median, once, table, usageOf, type ProcessUsage, type Run } from "./measure";

const root = resolve(__dirname, "..");
const cli = join(root, "bin/ray-gpu.js");
const work = mkdtempSync(join(tmpdir(), "ray-gpu-render-bench-"));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 5);
const SIZES = (process.env["BENCH_SIZES"] ?? "10,100,1000,5000").split(",").map(Number);

/** One run of a node script under bench/usage.cjs; `fresh` is removed first (outside the measure) when given. */
function measured(run: Run, fresh?: string): ProcessUsage {
  if (fresh) rmSync(fresh, { recursive: true, force: true });
  return usageOf(run, join(work, "usage.jsonl"));
}

/** Ours and cdk8s's runs in alternation: medians and the median per-pair CPU ratio. */
function pairs(ours: Run, theirs: Run, runs: number, fresh?: readonly [string, string]): string[] {
  measured(ours, fresh?.[0]);
  measured(theirs, fresh?.[1]);
  const rounds = Array.from({ length: runs }, () => [measured(ours, fresh?.[0]), measured(theirs, fresh?.[1])]);
  const m = (pick: (r: ProcessUsage[]) => number) => median(rounds.map(pick));
  return [
    m((r) => r[0]!.cpuS).toFixed(3),
    m((r) => r[1]!.cpuS).toFixed(3),
    m((r) => r[0]!.cpuS / r[1]!.cpuS).toFixed(2),
    m((r) => r[0]!.peakRssMiB).toFixed(0),
    m((r) => r[1]!.peakRssMiB).toFixed(0),
  ];
}

/** CPU seconds in this process, the median of `runs` after one warm-up. */
function inProcess(f: () => void, runs: number): number {
  f();
  return median(
    Array.from({ length: runs }, () => {
      const t0 = performance.now();
      f();
      return (performance.now() - t0) / 1000;
    }),
  );
}

/** Where render's CPU goes, in this process: read and plan the stack file, then the objects' YAML. */
function phases(n: number, runs: number): string[] {
  const runtime = loadRuntimePackage();
  const read = () => planStackFile(work, `bench-${n}`, { runtime, requireRender: true });
  const { plan } = read();
  const objects = [...plan.shared, ...plan.objects.flatMap((o) => o.objects)];
  const planS = inProcess(read, runs);
  const yamlS = inProcess(() => objects.forEach((o) => stableYaml(o)), runs);
  return [planS.toFixed(3), yamlS.toFixed(3)];
}

function bench(n: number) {
  const runs = n >= 5000 ? Math.min(RUNS, 3) : RUNS;
  writeFileSync(join(work, `Pulumi.bench-${n}.yaml`), benchStackFile(n));
  const dir = (name: string) => join(work, `${name}-${n}`);
  const ours = (out: string): Run => [cli, ["-C", work, "render", "--stack", `bench-${n}`, "--out", out]];
  const [script, args] = ours(dir("ours"));
  once([process.execPath, [script, ...args]]);
  const files = readdirSync(dir("ours")).filter((f) => f.endsWith(".yaml"));
  const objects = files.map((f) => parse(readFileSync(join(dir("ours"), f), "utf8")) as unknown);
  writeFileSync(join(work, `objects-${n}.json`), JSON.stringify(objects));
  const theirs = (out: string): Run => [join(root, "bench/cdk8s-synth.js"), [join(work, `objects-${n}.json`), out]];
  mkdirSync(dir("cdk8s"), { recursive: true });
  const again = pairs(ours(dir("ours")), theirs(dir("cdk8s")), runs);
  const first = pairs(ours(dir("new-ours")), theirs(dir("new-cdk8s")), runs, [dir("new-ours"), dir("new-cdk8s")]);
  return { row: [String(n), String(objects.length)], again, first, phases: phases(n, runs) };
}

console.log(
  `render against cdk8s, ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}, load ${loadAverages()}\n`,
);
try {
  const results = SIZES.map(bench);
  const header = ["workloads", "objects", "ours CPU s", "cdk8s CPU s", "ours / cdk8s", "ours MiB", "cdk8s MiB"];
  for (const [title, pick] of [
    ["again (into the previous output)", (r: ReturnType<typeof bench>) => r.again],
    ["first (into a new folder)", (r: ReturnType<typeof bench>) => r.first],
  ] as const) {
    console.log(
      `${title}:\n\n${table(
        header,
        results.map((r) => [...r.row, ...pick(r)]),
      )}\n`,
    );
  }
  const phaseHeader = ["workloads", "read + plan s", "objects' YAML s"];
  console.log(
    `in process:\n\n${table(
      phaseHeader,
      results.map((r) => [r.row[0]!, ...r.phases]),
    )}\n`,
  );
  console.log(`load at the end: ${loadAverages()}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
