/**
 * Benchmark (not a test): how long `ray-gpu plan` and `render` spend in the pure core for the repo's stacks.
 * Reports medians over many runs and the ratio of render to plan. Run with `npm run bench`.
 */
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { loadStackConfig } from "../cli/stack-file";
import { stableYaml } from "../core/serialize";
import { planStack } from "../workloads/stack";
import { loadRuntimePackage } from "../io/runtime-package";

const runtime = loadRuntimePackage();

const RUNS = 200;
const root = resolve(__dirname, "..");

function median(xs: number[]): number {
  const s = xs.toSorted((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function time(fn: () => void): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

for (const stack of ["dev", "prod"]) {
  const load: number[] = [];
  const plan: number[] = [];
  const render: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let config = loadStackConfig(root, stack).config;
    load.push(time(() => (config = loadStackConfig(root, stack).config)));
    let p = planStack(config, { runtime });
    plan.push(time(() => (p = planStack(config, { runtime }))));
    render.push(time(() => p.objects.flatMap((o) => o.objects).forEach((o) => stableYaml(o))));
  }
  const [l, pl, r] = [median(load), median(plan), median(render)];
  console.log(
    `${stack}: median load+validate ${l.toFixed(3)} ms, plan ${pl.toFixed(3)} ms, render YAML ${r.toFixed(3)} ` +
      `ms (render/plan ${(r / pl).toFixed(2)}x) over ${RUNS} runs`,
  );
}
