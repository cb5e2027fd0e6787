/**
 * The `ray-gpu` command: plan and render stacks offline, without cloud credentials or the Pulumi CLI.
 * Exit codes: 0 ok, 1 invalid input (every problem listed), 2 usage error.
 */
import { Command, CommanderError, Option } from "commander";
import { ENVIRONMENTS, parseStackConfig, type Environment, type StackConfig } from "../core/config/stack";
import { ConfigError } from "../core/errors";
import { stableJson } from "../core/serialize";
import { planStack } from "../workloads/stack";
import { planDocument, planText } from "./plan-view";
import { writeRender } from "./render";
import { loadStackConfig, UsageError } from "./stack-file";
import { loadWorkloadFile, standaloneStack } from "./workload-file";
import { previewStack, previewText } from "./preview/run";
import { loadRuntimePackage } from "../io/runtime-package";

/** Exit codes of the CLI; a stable contract for scripts. */
export const EXIT = { ok: 0, invalidInput: 1, usage: 2 } as const;

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  cwd: string;
}

const defaultIo = (): Io => ({
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  cwd: process.cwd(),
});

function build(io: Io, setCode: (c: number) => void): Command {
  const program = new Command("ray-gpu")
    .description(
      "Plan and render Ray-on-A10G stacks offline: node pools, tuned KubeRay RayJobs and the reason for every value.",
    )
    .option("-C, --dir <dir>", "folder with Pulumi.yaml and the Pulumi.<stack>.yaml files", io.cwd)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError("(run with --help for usage)");

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
    .action((opts: { stack?: string; workload?: string; env?: Environment; json?: boolean }) => {
      const dir = program.opts<{ dir: string }>().dir;
      if (!opts.stack && !opts.workload) throw new UsageError("plan needs --stack <name> or --workload <file>");
      let stackName = opts.stack;
      let config;
      let source: string | undefined;
      if (opts.workload) {
        const spec = loadWorkloadFile(opts.workload);
        source = opts.workload;
        if (opts.stack) {
          const stack = loadStackConfig(dir, opts.stack).config;
          // Re-validated: the environment's rules (spot only in dev, …) apply to the stack's pools too.
          config = parseStackConfig(
            { ...stack, environment: opts.env ?? stack.environment, workloads: [spec] },
            `${opts.stack} with --env ${opts.env ?? stack.environment}`,
          );
        } else {
          config = standaloneStack(spec, opts.env ?? "dev");
          stackName = undefined;
        }
      } else {
        if (opts.env)
          throw new UsageError("--env applies to --workload only; a stack's environment comes from its config");
        config = loadStackConfig(dir, opts.stack!).config;
      }
      const plan = planStackOrThrow(config, source);
      io.out(opts.json ? stableJson(planDocument(stackName, plan)) : `${planText(stackName, plan)}\n`);
      const misfits = plan.workloads.filter((w) => !w.memory.fits);
      if (misfits.length > 0) {
        io.err(
          `ray-gpu: ${misfits.map((w) => `${w.name} does not fit in GPU memory: ${w.memory.advice.join("; or ")}`).join("\n")}\n`,
        );
        setCode(EXIT.invalidInput);
      }
    });

  program
    .command("render")
    .description("Write one YAML file per Kubernetes object of the stack's workloads, plus plan.json (byte-stable).")
    .requiredOption("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to render")
    .requiredOption("-o, --out <dir>", "output folder (its *.yaml and plan.json are replaced)")
    .action((opts: { stack: string; out: string }) => {
      const dir = program.opts<{ dir: string }>().dir;
      const plan = planStack(loadStackConfig(dir, opts.stack).config, {
        runtime: loadRuntimePackage(),
        requireRender: true,
      });
      const files = writeRender(opts.stack, plan, opts.out);
      io.out(`Rendered ${files.length} file(s) to ${opts.out}: ${files.join(", ")}\n`);
    });

  program
    .command("preview")
    .description(
      "List every resource `pulumi up` would create for the stack, with inputs (secrets redacted), offline under Pulumi's mock runtime.",
    )
    .requiredOption("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to preview")
    .option("--json", 'print { "resources": [ { "type", "name", "parent", "inputs" } ] }')
    .action(async (opts: { stack: string; json?: boolean }) => {
      const dir = program.opts<{ dir: string }>().dir;
      const doc = await previewStack(dir, opts.stack);
      io.out(opts.json ? stableJson(doc) : previewText(opts.stack, doc));
    });

  program.hook("preAction", () => setCode(EXIT.ok));
  return program;
}

/** Plans; a workload file's problems are reported against the file, as `workload.<field>`. */
function planStackOrThrow(config: StackConfig, workloadFile: string | undefined) {
  const runtime = loadRuntimePackage();
  if (workloadFile === undefined) return planStack(config, { runtime });
  try {
    return planStack(config, { runtime, workloadPath: () => "workload" });
  } catch (e) {
    if (e instanceof ConfigError) throw new ConfigError(e.issues, workloadFile);
    throw e;
  }
}

/** Runs the CLI with `argv` (without `node` and the script) and returns the exit code. */
export async function main(argv: readonly string[], io: Io = defaultIo()): Promise<number> {
  let code: number = EXIT.ok;
  const program = build(io, (c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander rejects is a usage error.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof UsageError) {
      io.err(`ray-gpu: ${err.message}\n(run with --help for usage)\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      io.err(`ray-gpu: invalid input\n${err.message}\n`);
      return EXIT.invalidInput;
    }
    throw err;
  }
}
