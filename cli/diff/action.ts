/** What `ray-gpu diff` does, loaded only when it runs. */
import { availableParallelism } from "node:os";
import type { StackConfig } from "../../core/config/stack";
import { ConfigError, namingSource } from "../../core/errors";
import { loadRuntimePackage } from "../../io/runtime-package";
import type { RuntimePackage } from "../../workloads/contract/configmaps";
import { planStack } from "../../workloads/stack";
import {
  baseProjectText as baseProjectTextOf,
  baseSource,
  baseStackNames,
  baseStackText,
  type BaseSource,
} from "./base";
import { DEFAULT_PROJECT, projectFromText, type ProjectFile } from "../input/project-file";
import { diffPlans, type PlanDocument, type StackDiff } from "./compare";
import { diffMarkdown } from "./markdown";
import { previewDir, previewText } from "./preview-child";
import { diffJson, diffText, firedRules, type FailRule, type StackReport } from "./summary";
import { diffResources } from "./resources";
import { EXIT, UsageError, type CommandContext } from "../io";
import { planDocument } from "../plan/document";
import { checkStackName, listStacks, loadStackConfig, stackConfigFromText } from "../input/stack-file";

/** The options of `ray-gpu diff`. */
export interface DiffOptions {
  base: string;
  stack?: string;
  allStacks?: boolean;
  format: "text" | "markdown" | "json";
  failOn?: string;
  /** `--no-preview` sets it false: the platform's resources are not previewed (faster; no `replace` rule). */
  preview: boolean;
}

const RULE_NAMES = ["no-fit", "replace", "prod-lifecycle"] as const;

/** `no-fit,prod-lifecycle,cost:25` as rules. */
export function parseFailOn(text: string | undefined): FailRule[] {
  if (!text) return [];
  return text.split(",").map((r): FailRule => {
    const rule = r.trim();
    const named = RULE_NAMES.find((n) => n === rule);
    if (named) return { kind: named };
    const cost = /^cost:(\d+(\.\d+)?)$/.exec(rule);
    if (cost) return { kind: "cost", usdPerHour: Number(cost[1]) };
    const runCost = /^run-cost:(\d+(\.\d+)?)$/.exec(rule);
    if (runCost) return { kind: "run-cost", usdPerRun: Number(runCost[1]) };
    throw new UsageError(
      `--fail-on ${JSON.stringify(rule)}: rules are no-fit, replace, prod-lifecycle, cost:<usd-per-hour> and ` +
        "run-cost:<usd-per-run>",
    );
  });
}

/**
 * A stack's config text merged with its project's config (the base's `Pulumi.yaml`, as `pulumi up` at the base would
 * read it), validated; a base that no longer validates is named as the base.
 */
function configOf(text: string | undefined, file: string, project: ProjectFile): StackConfig | undefined {
  if (text === undefined) return undefined;
  try {
    return stackConfigFromText(text, file, project);
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(e.issues, file);
    throw e;
  }
}

/** The plan document of a validated stack config; a base whose workloads no longer plan is named as the base. */
function documentOf(stack: string, config: StackConfig, file: string, runtime: RuntimePackage): PlanDocument {
  return planDocument(
    stack,
    namingSource(file, () => planStack(config, { runtime })),
  );
}

/** The cluster a stack's Kubernetes objects live on, in words: a change to it moves every object. */
const clusterOf = (c: StackConfig) =>
  `${c.platform.cluster.name} (${c.platform.cluster.mode === "create" ? "created by the stack" : "adopted"})`;

function stacksToDiff(ctx: CommandContext, opts: DiffOptions, source: BaseSource): string[] {
  if (opts.stack && opts.allStacks) throw new UsageError("give --stack <name> or --all-stacks, not both");
  if (opts.stack) return (checkStackName(opts.stack), [opts.stack]);
  if (!opts.allStacks) throw new UsageError("diff needs --stack <name> or --all-stacks");
  return [...new Set([...baseStackNames(source), ...listStacks(ctx.dir())])].sort();
}

/** One stack at the base and now: its config text at the base, the cluster it targets at each side, and its plans. */
interface StackSides {
  readonly stack: string;
  readonly baseText: string | undefined;
  /** The base's `Pulumi.yaml`, where it has one. */
  readonly baseProjectText: string | undefined;
  readonly baseLabel: string;
  readonly existsNow: boolean;
  readonly cluster: { readonly before?: string; readonly after?: string };
  readonly diff: StackDiff;
}

function planSides(ctx: CommandContext, opts: DiffOptions, source: BaseSource, runtime: RuntimePackage) {
  const now = new Set(listStacks(ctx.dir()));
  const baseProjectText = baseProjectTextOf(source);
  const project =
    baseProjectText === undefined ? DEFAULT_PROJECT : projectFromText(baseProjectText, `${opts.base}:Pulumi.yaml`);
  return stacksToDiff(ctx, opts, source).map((stack): StackSides => {
    const baseLabel = `${opts.base}:Pulumi.${stack}.yaml`;
    const baseText = baseStackText(source, stack);
    const baseConfig = configOf(baseText, baseLabel, project);
    const existsNow = now.has(stack);
    const head = existsNow ? loadStackConfig(ctx.dir(), stack) : undefined;
    const headConfig = head?.config;
    if (!baseConfig && !headConfig) throw new UsageError(`no stack "${stack}" at the base or now`);
    const before = baseConfig && documentOf(stack, baseConfig, baseLabel, runtime);
    const after = head && documentOf(stack, head.config, head.file, runtime);
    const cluster = {
      ...(baseConfig ? { before: clusterOf(baseConfig) } : {}),
      ...(headConfig ? { after: clusterOf(headConfig) } : {}),
    };
    return { stack, baseText, baseProjectText, baseLabel, existsNow, cluster, diff: diffPlans(before, after) };
  });
}

/** Why a side's preview could not run: its program would fail the same way (a workload that does not fit). */
const previewProblem = (side: string, e: unknown) => {
  if (!(e instanceof ConfigError)) throw e;
  return `the program would fail ${side}: ${e.issues
    .map((i) => i.message)
    .join("; ")
    .split("\n")[0]!
    .slice(0, 300)}`;
};

/** One stack's resources, or why they were not compared. */
async function stackResources(ctx: CommandContext, s: StackSides, run: Run): Promise<StackReport> {
  const base = { stack: s.stack, diff: s.diff, resources: null };
  if (s.baseText === undefined) return { ...base, notPreviewed: "the stack file is new: every resource is added" };
  if (!s.existsNow)
    return { ...base, notPreviewed: "the stack file is removed: removing it destroys nothing (pulumi destroy does)" };
  const said =
    (side: string) =>
    <T>(r: T): T => (ctx.io.progress?.(`previewed ${s.stack} ${side}`), r);
  const [before, after] = await Promise.all([
    run(() => previewText({ stack: s.baseText!, project: s.baseProjectText }, s.stack, s.baseLabel))
      .then(said("at the base"))
      .catch((e: unknown) => previewProblem("at the base", e)),
    run(() => previewDir(ctx.dir(), s.stack))
      .then(said("now"))
      .catch((e: unknown) => previewProblem("now", e)),
  ]);
  if (typeof before === "string") return { ...base, notPreviewed: before };
  if (typeof after === "string") return { ...base, notPreviewed: after };
  const { before: was, after: is } = s.cluster;
  const target = was && is && was !== is ? { before: was, after: is } : undefined;
  return { stack: s.stack, diff: s.diff, resources: diffResources(before, after, target) };
}

type Run = <T>(task: () => Promise<T>) => Promise<T>;

/** A runner that lets at most `limit` tasks run at once. */
function runner(limit: number): Run {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((r) => waiting.push(r));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** The platform resources of every stack at both sides, previewed in child processes, a few at a time. */
function withResources(ctx: CommandContext, sides: readonly StackSides[]): Promise<StackReport[]> {
  const run = runner(Math.max(1, availableParallelism()));
  const stacks = sides.map((s) => s.stack).join(", ");
  ctx.io.progress?.(`previewing ${stacks} at the base and now (the Pulumi program, offline; a few seconds each)…`);
  return Promise.all(sides.map((s) => stackResources(ctx, s, run)));
}

/**
 * Plans (and, unless `--no-preview`, previews) each stack at the base and now, prints the differences, and sets exit 3
 * when a `--fail-on` rule fires.
 */
export async function runDiff(ctx: CommandContext, opts: DiffOptions): Promise<void> {
  const rules = parseFailOn(opts.failOn);
  if (!opts.preview && rules.some((r) => r.kind === "replace"))
    throw new UsageError("--fail-on replace needs the platform's resources: drop --no-preview");
  const source = baseSource(opts.base, ctx.io.cwd, ctx.dir());
  ctx.io.progress?.(`planning each stack at ${opts.base} and now…`);
  const sides = planSides(ctx, opts, source, loadRuntimePackage());
  const stacks: StackReport[] = opts.preview
    ? await withResources(ctx, sides)
    : sides.map((s) => ({ stack: s.stack, diff: s.diff, resources: null, notPreviewed: "--no-preview" }));
  const fired = firedRules(stacks, rules);
  const view = {
    text: () => diffText(stacks),
    markdown: () => diffMarkdown(stacks, fired),
    json: () => diffJson(stacks, fired),
  };
  ctx.io.out(`${view[opts.format]()}\n`);
  if (fired.length > 0) {
    if (opts.format !== "markdown") ctx.io.err(`ray-gpu: --fail-on fired:\n${fired.map((f) => `  ${f}`).join("\n")}\n`);
    ctx.setCode(EXIT.failOn);
  }
}
