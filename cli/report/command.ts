/**
 * `ray-gpu report`: one job's GPU utilization, memory, spilling, throughput and cost from Prometheus, next to what its
 * plan promised. Only the options are declared here; the action's code is loaded when the command runs.
 */
import type { Command } from "commander";
import type { ReportOptions } from "./action";
import type { CommandContext } from "../io";

export function registerReport(program: Command, ctx: CommandContext): void {
  program
    .command("report")
    .description(
      "Report one job from Prometheus: average and p10 GPU utilization per worker and overall, peak GPU memory, bytes " +
        "spilled, throughput, GPU-hours and cost, each next to its plan, with a verdict line.",
    )
    .requiredOption("-j, --job <name>", "the workload (RayJob) to report")
    .requiredOption("-p, --prometheus <url>", "Prometheus base URL, e.g. http://localhost:9090 (kubectl port-forward)")
    .requiredOption("-s, --stack <name>", "stack whose plan the job is compared with")
    .option("--from <time>", "start of the window (RFC 3339 or Unix seconds; default: when the job's pods appeared)")
    .option("--to <time>", "end of the window (default: now, or when the job's pods went)")
    .option("--lookback <duration>", "how far back to look for the job's pods when --from is not given", "7d")
    .option("--json", "print the report as JSON")
    .option(
      "--html <file>",
      "also write the report as one HTML page: the utilization timeline per worker, memory planned vs used",
    )
    .action(async (opts: ReportOptions) => {
      const { runReport } = await import("./action.js");
      await runReport(ctx, opts);
    });
}
