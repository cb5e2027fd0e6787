/** `ray-gpu render`: one YAML file per Kubernetes object of the stack's workloads, plus plan.json (byte-stable). */
import type { Command } from "commander";
import { loadRuntimePackage } from "../../io/runtime-package";
import { planStack } from "../../workloads/stack";
import type { CommandContext } from "../io";
import { writeRender } from "../render";
import { loadStackConfig } from "../stack-file";

export function registerRender(program: Command, ctx: CommandContext): void {
  program
    .command("render")
    .description("Write one YAML file per Kubernetes object of the stack's workloads, plus plan.json (byte-stable).")
    .requiredOption("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to render")
    .requiredOption("-o, --out <dir>", "output folder (its *.yaml and plan.json are replaced)")
    .action((opts: { stack: string; out: string }) => {
      const config = loadStackConfig(ctx.dir(), opts.stack).config;
      const plan = planStack(config, { runtime: loadRuntimePackage(), requireRender: true });
      const files = writeRender(opts.stack, plan, opts.out);
      ctx.io.out(`Rendered ${files.length} file(s) to ${opts.out}: ${files.join(", ")}\n`);
    });
}
