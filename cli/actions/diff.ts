/** What `ray-gpu diff` does, loaded only when it runs. */
import { ConfigError } from "../../core/errors";
import { loadRuntimePackage } from "../../io/runtime-package";
import type { RuntimePackage } from "../../workloads/contract/configmaps";
import { planStack } from "../../workloads/stack";
import { baseSource, baseStackNames, baseStackText, type BaseSource } from "../diff/base";
import { diffPlans, type PlanDocument, type StackDiff } from "../diff/compare";
import { diffJson, diffMarkdown, diffText, firedRules, type FailRule } from "../diff/report";
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
}

/** `no-fit,prod-lifecycle,cost:25` as rules. */
export function parseFailOn(text: string | undefined): FailRule[] {
  if (!text) return [];
  return text.split(",").map((r): FailRule => {
    const rule = r.trim();
    if (rule === "no-fit" || rule === "prod-lifecycle") return { kind: rule };
    const cost = /^cost:(\d+(\.\d+)?)$/.exec(rule);
    if (cost) return { kind: "cost", usdPerHour: Number(cost[1]) };
    if (rule === "replace")
      throw new UsageError("--fail-on replace needs the diff of the platform's resources, which is not built yet");
    throw new UsageError(`--fail-on ${JSON.stringify(rule)}: rules are no-fit, prod-lifecycle and cost:<usd-per-hour>`);
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

/** Plans each stack at the base and now, prints the differences, and sets exit 3 when a `--fail-on` rule fires. */
export function runDiff(ctx: CommandContext, opts: DiffOptions): void {
  const rules = parseFailOn(opts.failOn);
  const source = baseSource(opts.base, ctx.io.cwd, ctx.dir());
  const now = new Set(listStacks(ctx.dir()));
  const runtime = loadRuntimePackage();
  const stacks = stacksToDiff(ctx, opts, source).map((stack): { stack: string; diff: StackDiff } => {
    const file = `${opts.base}:Pulumi.${stack}.yaml`;
    const before = documentOf(stack, baseStackText(source, stack), file, runtime);
    const after = now.has(stack)
      ? planDocument(stack, planStack(loadStackConfig(ctx.dir(), stack).config, { runtime }))
      : undefined;
    if (!before && !after) throw new UsageError(`no stack "${stack}" at the base or now`);
    return { stack, diff: diffPlans(before, after) };
  });
  const fired = firedRules(
    stacks.map((s) => s.diff),
    rules,
  );
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
