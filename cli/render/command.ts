/**
 * `ray-gpu render`: one YAML file per Kubernetes object of the stack's workloads, plus plan.json (byte-stable). Only
 * the options are declared here; the action's code is loaded when the command runs.
 */
import type { Command } from "commander";
import type { RenderOptions } from "./action";
import type { CommandContext } from "../io";

export function registerRender(program: Command, ctx: CommandContext): void {
  program
    .command("render")
    .description(
      "Write one YAML file per Kubernetes object of the stack's workloads, plus plan.json (byte-stable), into a " +
        "folder of its own: written aside and swapped in whole, so a failure leaves the previous render as it was.",
    )
    .requiredOption("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to render")
    .requiredOption(
      "-o, --out <dir>",
      "output folder; a previous render there is replaced (refused if it holds files render did not write)",
    )
    .option(
      "--force",
      "render into a folder holding files render did not write: they are kept beside the render, never deleted",
    )
    .action(async (opts: RenderOptions) => {
      const { runRender } = await import("./action.js");
      runRender(ctx, opts);
    });
}
