/**
 * Benchmark (not a test): the deploy simulation's scheduling check on generated stacks of 10, 100 and 1,000 workloads
 * with pools of up to 1,000 nodes: the platform's pods spread on the pools at min size, each job alone and the jobs
 * Kueue admits together first-fit on the pools at max size. The indexed placement of `core/deploy/schedule.ts`
 * (what `planStack` runs) against the exhaustive one it replaced (`test/helpers/exhaustive-place.ts`), in process,
 * alternating, after three warm-ups of each (the JIT): medians and the median of per-pair ratios; then `planStack` as a whole.
 * Both must find the same pods unplaced with the same reasons, or the benchmark fails. Run:
 * `npx tsx bench/schedule.bench.ts` (`BENCH_RUNS`, default 5).
 */
import { performance } from "node:perf_hooks";
import { parseStackConfig, type StackConfig } from "../core/config/stack";
import { planLayout, type LayoutInput } from "../core/deploy/layout";
import { platformPods } from "../core/deploy/platform-pods";
import { copyNodes, poolNodes, type Unschedulable } from "../core/deploy/schedule";
import { planPlatform, type PlatformPlan } from "../core/platform-plan";
import { kueueRelease, type AdmissionPlan } from "../core/platform/queueing";
import { loadRuntimePackage } from "../io/runtime-package";
import { jobPods, schedulingIssues } from "../workloads/scheduling";
import { planStack, type StackPlan } from "../workloads/stack";
import type { WorkloadPlan } from "../workloads/workload";
import { exhaustivePlace } from "../test/helpers/exhaustive-place";
import { benchStackConfig } from "./kinds";
import { machineDescription, median, table } from "./measure";

const RUNS = Number(process.env["BENCH_RUNS"] ?? 5);
const runtime = loadRuntimePackage();

/** A prod stack of `n` workloads (`benchStackConfig`, as `render.bench.ts` writes it), pools up to `maxNodes` nodes. */
const generatedStack = (n: number, maxNodes: number): StackConfig => parseStackConfig(benchStackConfig(n, maxNodes));

/** What the check reads: the platform, the jobs with their config paths, what Kueue admits at once. */
interface CheckInput {
  readonly platform: PlatformPlan;
  readonly layout: LayoutInput;
  readonly jobs: readonly { plan: WorkloadPlan; path: string }[];
  readonly admission: AdmissionPlan | undefined;
}

function checkInput(config: StackConfig, plan: StackPlan): CheckInput {
  const platform = planPlatform(config);
  const layout = {
    pools: platform.pools,
    groups: [platform.nodeGroups.cpu, ...platform.nodeGroups.gpu],
    cluster: platform.cluster,
    helm: platform.helm,
    observability: platform.observability,
    queueing: platform.queue !== undefined,
  };
  const jobs = plan.workloads.filter((w) => w.memory.fits).map((w, i) => ({ plan: w, path: `w[${i}]` }));
  return { platform, layout, jobs, admission: plan.queue?.admission };
}

/** The check as `planStack` runs it: the layout, then every job alone and the admitted jobs together. */
function indexedCheck(c: CheckInput): string[] {
  const layout = planLayout(c.layout);
  return schedulingIssues({ ...c.platform, layout }, c.jobs, c.admission).map((i) => i.message);
}

/** The same check on the exhaustive placement, as it ran before: a fresh copy of every node for every job. */
function exhaustiveCheck(c: CheckInput): Unschedulable[] {
  const { pools, groups } = c.layout;
  const queueRelease = c.layout.queueing ? kueueRelease(pools.cpu.name) : undefined;
  const atMin = poolNodes(pools, groups, "minNodes");
  const platform = exhaustivePlace(platformPods(c.layout, queueRelease), atMin, "spread");
  const added = poolNodes(pools, groups, "maxNodes").filter(
    (n) => !atMin.some((m) => m.pool === n.pool && m.index === n.index),
  );
  const nodes = [...atMin, ...added];
  const alone = c.jobs.map((j) => exhaustivePlace(jobPods(j.plan), copyNodes(nodes), "firstFit"));
  const admitted = c.jobs.filter((j, i) => !alone[i]!.length && c.admission?.admitted.includes(j.plan.name));
  const together = c.admission
    ? exhaustivePlace(
        admitted.flatMap((j) => jobPods(j.plan)),
        copyNodes(nodes),
        "firstFit",
      )
    : [];
  return [...platform, ...alone.flat(), ...together];
}

/** Milliseconds of one call. */
function ms(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

/** One row: the check both ways (alternating), and planStack as it runs now. */
function row(n: number, maxNodes: number): string[] {
  const config = generatedStack(n, maxNodes);
  const plan = planStack(config, { runtime });
  const c = checkInput(config, plan);
  const [fast, slow] = [indexedCheck(c), exhaustiveCheck(c)];
  if (fast.length !== slow.length || !slow.every((u, i) => fast[i]!.includes(u.why)))
    throw new Error(`the checks disagree on ${n} workloads: ${JSON.stringify({ fast, slow })}`);
  for (let i = 0; i < 3; i++) {
    exhaustiveCheck(c);
    indexedCheck(c);
    planStack(config, { runtime });
  }
  const pairs = Array.from({ length: RUNS }, () => [ms(() => exhaustiveCheck(c)), ms(() => indexedCheck(c))]);
  const whole = median(Array.from({ length: RUNS }, () => ms(() => planStack(config, { runtime }))));
  const [before, after] = [median(pairs.map(([b]) => b!)), median(pairs.map(([, a]) => a!))];
  const pods = c.jobs.reduce((s, j) => s + jobPods(j.plan).length, 0);
  return [
    String(n),
    String(maxNodes),
    String(pods),
    String(c.admission?.admitted.length ?? 0),
    before.toFixed(1),
    after.toFixed(1),
    median(pairs.map(([b, a]) => b! / a!)).toFixed(1),
    whole.toFixed(0),
    (whole - after + before).toFixed(0),
  ];
}

console.log(
  `scheduling check, ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}: medians of ${RUNS} runs\n`,
);
const header = [
  "workloads",
  "GPU nodes per pool at max",
  "job pods",
  "admitted together",
  "exhaustive ms",
  "indexed ms",
];
const rows = [
  [10, 10],
  [10, 1000],
  [100, 1000],
  [1000, 1000],
].map(([n, nodes]) => row(n!, nodes!));
console.log(table([...header, "× faster", "planStack ms", "planStack ms, exhaustive (est.)"], rows));
