/** What `ray-gpu plan` does, loaded only when it runs (the schemas and planners are not needed for `--help`). */
import { writeOutputFile } from "../output/file";
import { HTML_PAGE } from "../output/html-page";
import { planHtml } from "./html";
import { parseStackConfig, type Environment, type StackConfig } from "../../core/config/stack";
import { ConfigError, namingSource } from "../../core/errors";
import { adviceText } from "../../core/memory/advice-text";
import { stableJson } from "../../core/serialize";
import { loadRuntimePackage } from "../../io/runtime-package";
import { planStack, type StackPlan } from "../../workloads/stack";
import { workloadLabel } from "../../workloads/workload";
import { EXIT, UsageError, type CommandContext } from "../io";
import { planDocument } from "./document";
import { planText, workloadStartup } from "./text";
import { loadStackConfig } from "../input/stack-file";
import { loadWorkloadFile, standaloneStack } from "../input/workload-file";

/** The options of `ray-gpu plan`. */
export interface PlanOptions {
  stack?: string;
  workload?: string;
  env?: Environment;
  json?: boolean;
  html?: string;
}

/**
 * The config to plan (the stack, one workload file on the stack's pools, or one workload file on its own pool), and
 * the file its problems are reported against: the workload file when there is one, else the stack file.
 */
function configFor(
  dir: string,
  opts: PlanOptions,
): { config: StackConfig; stack: string | undefined; file: string | undefined; source: string } {
  if (!opts.workload) {
    if (!opts.stack) throw new UsageError("plan needs --stack <name> or --workload <file>");
    if (opts.env) throw new UsageError("--env applies to --workload only; a stack's environment comes from its config");
    const { config, file } = loadStackConfig(dir, opts.stack);
    return { config, stack: opts.stack, file: undefined, source: file };
  }
  const spec = loadWorkloadFile(opts.workload);
  if (!opts.stack)
    return {
      config: standaloneStack(spec, opts.env ?? "dev"),
      stack: undefined,
      file: opts.workload,
      source: opts.workload,
    };
  const stack = loadStackConfig(dir, opts.stack).config;
  const environment = opts.env ?? stack.environment;
  // Re-validated: the environment's rules (spot only in dev, …) apply to the stack's pools too.
  const config = parseStackConfig(
    { ...stack, environment, workloads: [spec] },
    `${opts.stack} with --env ${environment}`,
  );
  return { config, stack: opts.stack, file: opts.workload, source: opts.workload };
}

/**
 * Plans; problems are reported against the stack file, or a workload file's against it, naming the workload as its
 * construct does (`TrainingJob "llama-ddp".gpus`).
 */
function planOrThrow(config: StackConfig, workloadFile: string | undefined, stackFile: string): StackPlan {
  const runtime = loadRuntimePackage();
  if (workloadFile === undefined) return namingSource(stackFile, () => planStack(config, { runtime }));
  const spec = config.workloads[0]!;
  const path = workloadLabel(spec.kind, spec.name);
  try {
    const plan = planStack(config, { runtime, workloadPath: () => path });
    // A workload file is planned before its image exists: only other reasons not to render are worth a line.
    const notRendered = plan.notRendered.filter(
      (n) => !n.issues.every((i) => i.path === `${path}.image` || i.path === `${path}.entrypoint`),
    );
    return { ...plan, notRendered };
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(e.issues, workloadFile);
    throw e;
  }
}

/** Prints the plan (text or JSON); workloads that do not fit in GPU memory are listed on stderr and exit 1. */
export function runPlan(ctx: CommandContext, opts: PlanOptions): void {
  const { config, stack, file, source } = configFor(ctx.dir(), opts);
  const plan = planOrThrow(config, file, source);
  const doc = opts.html !== undefined || opts.json ? planDocument(stack, plan) : undefined;
  if (opts.html !== undefined)
    writeOutputFile({ flag: "--html", file: opts.html, cwd: ctx.io.cwd }, planHtml(doc!), HTML_PAGE);
  ctx.io.out(opts.json ? stableJson(doc) : `${planText(stack, plan, undefined, workloadStartup(config.workloads))}\n`);
  const misfits = plan.workloads.filter((w) => !w.memory.fits);
  if (misfits.length === 0) return;
  const count = misfits.length === 1 ? "1 workload does not fit" : `${misfits.length} workloads do not fit`;
  const lines = misfits.map((w) => `  ✖ ${w.name}: ${adviceText(w.memory.advice)}`);
  ctx.io.err(`ray-gpu: ${source}: ${count}\n${lines.join("\n")}\n`);
  ctx.setCode(EXIT.invalidInput);
}
