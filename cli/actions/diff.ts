/** What `ray-gpu diff` does, loaded only when it runs. */
import { ConfigError } from "../../core/errors";
import { loadRuntimePackage } from "../../io/runtime-package";
import type { RuntimePackage } from "../../workloads/contract/configmaps";
import { planStack } from "../../workloads/stack";
import { baseSource, baseStackNames, baseStackText, type BaseSource } from "../diff/base";
import { diffPlans, type PlanDocument, type StackDiff } from "../diff/compare";
import { diffMarkdown } from "../diff/markdown";
import { previewDir, previewText } from "../diff/preview-child";
import { diffJson, diffText, firedRules, type FailRule, type StackReport } from "../diff/report";
import { diffResources } from "../diff/resources";
import { EXIT, UsageError, type CommandContext } from "../io";
import { planDocument } from "../plan-view";
import { checkStackName, listStacks, loadStackConfig, stackConfigFromText } from "../stack-file";

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
    throw new UsageError(
      `--fail-on ${JSON.stringify(rule)}: rules are no-fit, replace, prod-lifecycle and cost:<usd-per-hour>`,
    );
  });
}

/** The plan document of a stack's config text; a base that no longer validates is named as the base. */
function documentOf(
  stack: string,
  text: string | undefined,
  file: string,
  runtime: RuntimePackage,
): PlanDocument | undefined {
  if (text === undefined) return undefined;
  try {
    return planDocument(stack, planStack(stackConfigFromText(text, file), { runtime }));
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(e.issues, file);
    throw e;
  }
}

function stacksToDiff(ctx: CommandContext, opts: DiffOptions, source: BaseSource): string[] {
  if (opts.stack && opts.allStacks) throw new UsageError("give --stack <name> or --all-stacks, not both");
  if (opts.stack) return (checkStackName(opts.stack), [opts.stack]);
  if (!opts.allStacks) throw new UsageError("diff needs --stack <name> or --all-stacks");
  return [...new Set([...baseStackNames(source), ...listStacks(ctx.dir())])].sort();
}

/** One stack at the base and now: its config text at the base, and its plans. */
interface StackSides {
  readonly stack: string;
  readonly baseText: string | undefined;
  readonly baseLabel: string;
  readonly existsNow: boolean;
  readonly diff: StackDiff;
}

function planSides(ctx: CommandContext, opts: DiffOptions, source: BaseSource, runtime: RuntimePackage) {
  const now = new Set(listStacks(ctx.dir()));
  return stacksToDiff(ctx, opts, source).map((stack): StackSides => {
    const baseLabel = `${opts.base}:Pulumi.${stack}.yaml`;
    const baseText = baseStackText(source, stack);
    const before = documentOf(stack, baseText, baseLabel, runtime);
    const existsNow = now.has(stack);
    const after = existsNow
      ? planDocument(stack, planStack(loadStackConfig(ctx.dir(), stack).config, { runtime }))
      : undefined;
    if (!before && !after) throw new UsageError(`no stack "${stack}" at the base or now`);
    return { stack, baseText, baseLabel, existsNow, diff: diffPlans(before, after) };
  });
}

/** The platform resources of every stack at both sides, previewed in parallel child processes. */
async function withResources(ctx: CommandContext, sides: readonly StackSides[]): Promise<StackReport[]> {
  return Promise.all(
    sides.map(async (s): Promise<StackReport> => {
      const [before, after] = await Promise.all([
        s.baseText === undefined ? [] : previewText(s.baseText, s.stack, s.baseLabel),
        s.existsNow ? previewDir(ctx.dir(), s.stack) : [],
      ]);
      return { stack: s.stack, diff: s.diff, resources: diffResources(before, after) };
    }),
  );
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
  const sides = planSides(ctx, opts, source, loadRuntimePackage());
  const stacks: StackReport[] = opts.preview
    ? await withResources(ctx, sides)
    : sides.map((s) => ({ stack: s.stack, diff: s.diff, resources: null }));
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
