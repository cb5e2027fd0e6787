/** `ray-gpu plan`: the node pools and each workload's plan with its reasons, for a stack or one workload file. */
import { type Command, Option } from "commander";
import { ENVIRONMENTS, parseStackConfig, type Environment, type StackConfig } from "../../core/config/stack";
import { ConfigError } from "../../core/errors";
import { stableJson } from "../../core/serialize";
import { loadRuntimePackage } from "../../io/runtime-package";
import { planStack, type StackPlan } from "../../workloads/stack";
import { EXIT, type CommandContext } from "../io";
import { planDocument, planText } from "../plan-view";
import { loadStackConfig, UsageError } from "../stack-file";
import { loadWorkloadFile, standaloneStack } from "../workload-file";

interface PlanOptions {
  stack?: string;
  workload?: string;
  env?: Environment;
  json?: boolean;
}

/** The config to plan: the stack, one workload file on the stack's pools, or one workload file on its own pool. */
function configFor(
  dir: string,
  opts: PlanOptions,
): { config: StackConfig; stack: string | undefined; file: string | undefined } {
  if (!opts.workload) {
    if (!opts.stack) throw new UsageError("plan needs --stack <name> or --workload <file>");
    if (opts.env) throw new UsageError("--env applies to --workload only; a stack's environment comes from its config");
    return { config: loadStackConfig(dir, opts.stack).config, stack: opts.stack, file: undefined };
  }
  const spec = loadWorkloadFile(opts.workload);
  if (!opts.stack) return { config: standaloneStack(spec, opts.env ?? "dev"), stack: undefined, file: opts.workload };
  const stack = loadStackConfig(dir, opts.stack).config;
  const environment = opts.env ?? stack.environment;
  // Re-validated: the environment's rules (spot only in dev, …) apply to the stack's pools too.
  const config = parseStackConfig(
    { ...stack, environment, workloads: [spec] },
    `${opts.stack} with --env ${environment}`,
  );
  return { config, stack: opts.stack, file: opts.workload };
}

/** Plans; a workload file's problems are reported against the file, as `workload.<field>`. */
function planOrThrow(config: StackConfig, workloadFile: string | undefined): StackPlan {
  const runtime = loadRuntimePackage();
  if (workloadFile === undefined) return planStack(config, { runtime });
  try {
    return planStack(config, { runtime, workloadPath: () => "workload" });
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(e.issues, workloadFile);
    throw e;
  }
}

export function registerPlan(program: Command, ctx: CommandContext): void {
  program
    .command("plan")
    .description("Show the node pools (allocatable per node, cost at max) and each workload's plan with its reasons.")
    .option("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to plan")
    .option("-w, --workload <file>", "plan one workload file (YAML or JSON, same schema as a ray-gpu:workloads entry)")
    .addOption(
      new Option("-e, --env <env>", "environment for --workload (default: the stack's, else dev)").choices(
        ENVIRONMENTS,
      ),
    )
    .option("--json", "print the plan as JSON: { stack, environment, region, namespace, pools, workloads }")
    .action((opts: PlanOptions) => {
      const { config, stack, file } = configFor(ctx.dir(), opts);
      const plan = planOrThrow(config, file);
      ctx.io.out(opts.json ? stableJson(planDocument(stack, plan)) : `${planText(stack, plan)}\n`);
      const misfits = plan.workloads.filter((w) => !w.memory.fits);
      if (misfits.length === 0) return;
      const lines = misfits.map((w) => `${w.name} does not fit in GPU memory: ${w.memory.advice.join("; or ")}`);
      ctx.io.err(`ray-gpu: ${lines.join("\n")}\n`);
      ctx.setCode(EXIT.invalidInput);
    });
}
