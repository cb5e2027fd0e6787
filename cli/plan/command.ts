/**
 * `ray-gpu plan`: the node pools and each workload's plan with its reasons, for a stack or one workload file. Only the
 * options are declared here; the action's code is loaded when the command runs.
 */
import { type Command, Option } from "commander";
import { ENVIRONMENTS } from "../../core/config/environment-names";
import type { PlanOptions } from "./action";
import type { CommandContext } from "../io";

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
    .option(
      "--html <file>",
      "also write the plan as one HTML page: each workload's GPU memory budget, each pool's nodes",
    )
    .action(async (opts: PlanOptions) => {
      const { runPlan } = await import("./action.js");
      runPlan(ctx, opts);
    });
}
