/**
 * `ray-gpu diff`: what a change to the stacks means (GPUs, knobs, fit, cost), against a git ref or a folder. Only the
 * options are declared here; the action's code is loaded when the command runs.
 */
import { type Command, Option } from "commander";
import type { DiffOptions } from "./action";
import type { CommandContext } from "../io";

export function registerDiff(program: Command, ctx: CommandContext): void {
  program
    .command("diff")
    .description(
      "Compare the plan of a stack at a base (a git ref or a folder) with the plan now: workloads added, removed and " +
        "re-planned (every planned value old -> new, with its reason), fit verdicts, headroom, pools and cost, and the " +
        "platform resources added, removed, replaced or updated (from the offline preview).",
    )
    .requiredOption(
      "-b, --base <ref|folder>",
      "git ref (e.g. origin/main) or a folder holding the base's Pulumi.<stack>.yaml",
    )
    .option("-s, --stack <name>", "the stack to compare")
    .option("--all-stacks", "compare every stack present at the base or now")
    .addOption(
      new Option("-f, --format <format>", "output format").choices(["text", "markdown", "json"]).default("text"),
    )
    .option(
      "--fail-on <rules>",
      "exit 3 when a rule fires: no-fit, replace, prod-lifecycle, cost:<usd-per-hour>, run-cost:<usd-per-run> " +
        "(comma-separated)",
    )
    .option("--no-preview", "compare the plans only, not the platform's resources (faster; no replace rule)")
    .action(async (opts: DiffOptions) => {
      const { runDiff } = await import("./action.js");
      await runDiff(ctx, opts);
    });
}
