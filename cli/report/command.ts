/**
 * `ray-gpu report`: one job's GPU utilization, memory, spilling, throughput and cost from Prometheus (a live server, or
 * a recording of its answers), next to what its plan promised. Only the options are declared here; the action's code
 * is loaded when the command runs.
 */
import type { Command } from "commander";
import type { ReportOptions } from "./action";
import type { CommandContext } from "../io";

export function registerReport(program: Command, ctx: CommandContext): void {
  program
    .command("report")
    .description(
      "Report one job from Prometheus: average and p10 GPU utilization per worker and overall, peak GPU memory, bytes " +
        "spilled, throughput, GPU-hours and cost, each next to its plan, with a verdict line. Give a live server " +
        "(--prometheus) or a recording of one (--recording).",
    )
    .requiredOption("-j, --job <name>", "the workload (RayJob) to report")
    .option("-p, --prometheus <url>", "Prometheus base URL, e.g. http://localhost:9090 (kubectl port-forward)")
    .option(
      "--recording <file>",
      "answer every query from a recording instead of a server (--save-recording wrote it; try " +
        "examples/report/prod-llm-pretrain.recording.json)",
    )
    .option(
      "--save-recording <file>",
      "with --prometheus: also write every query and Prometheus's answer to a file, to replay with --recording",
    )
    .requiredOption("-s, --stack <name>", "stack whose plan the job is compared with")
    .option(
      "--from <time>",
      "start of the window (RFC 3339 or Unix seconds; default: when the job's pods appeared, or the recording's)",
    )
    .option("--to <time>", "end of the window (default: now, or the recording's; the job's end if sooner)")
    .option(
      "--lookback <duration>",
      "how far back before --to to look for the job's pods when --from is not given (default: 7d, or the recording's)",
    )
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
