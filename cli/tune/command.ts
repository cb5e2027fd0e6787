/**
 * `ray-gpu tune`: turns a measured run into a better plan. Only the options are declared here; the action's code is
 * loaded when the command runs.
 */
import type { Command } from "commander";
import type { TuneOptions } from "./action";
import type { CommandContext } from "../io";

export function registerTune(program: Command, ctx: CommandContext): void {
  program
    .command("tune")
    .description(
      "Read a run's record, name the stage that bound it (reading, preprocessing, the GPU stage, the object store, the " +
        "DataLoader, GPU memory) with its numbers, and propose the workload settings that lift it, as a diff of the " +
        "stack file; a healthy run changes nothing, and a run of another plan is refused.",
    )
    .requiredOption("-s, --stack <name>", "stack whose Pulumi.<name>.yaml planned the run")
    .requiredOption("-f, --from <file>", "the run record the job wrote (RAY_GPU_RUN_RECORD_FILE, or its log line)")
    .option("-w, --workload <name>", "the workload (default: the record's)")
    .option("--write", "apply the proposed change to the stack file")
    .option("--json", "print the diagnosis and the change as JSON")
    .action(async (opts: TuneOptions, command: Command) => {
      const { runTune } = await import("./action.js");
      // `-C` as the user gave it (not its default, the current folder), which the printed apply command repeats.
      const given = command.parent?.getOptionValueSource("dir") === "cli" ? ctx.dir() : undefined;
      runTune(ctx, opts, given);
    });
}
