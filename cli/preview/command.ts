/**
 * `ray-gpu preview`: every resource `pulumi up` would create, from the real program under Pulumi's mock runtime. The
 * Pulumi SDK is loaded only here, when this command runs: the other commands never pay for it.
 */
import type { Command } from "commander";
import type { CommandContext } from "../io";
import type { PreviewOptions } from "./action";

export function registerPreview(program: Command, ctx: CommandContext): void {
  program
    .command("preview")
    .description(
      "List every resource `pulumi up` would create for the stack, with inputs (secrets redacted) and what each " +
        "waits for, offline under Pulumi's mock runtime; exit 1 when the deploy simulation finds a wait that never " +
        "ends or a pod no node can take.",
    )
    .option("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to preview (with --program: its config, if present)")
    .option(
      "-p, --program <dir>",
      "run your own Pulumi program (a Node.js project folder with its packages installed) instead of the bundled one",
    )
    .option("--json", 'print { "resources": [ { "type", "name", "parent", "dependsOn", "inputs" } ] }')
    .option("--wide", "one line per resource with its full type token, whole name and parent (wider than 120 columns)")
    .action(async (opts: PreviewOptions) => {
      const { runPreview } = await import("./action.js");
      await runPreview(ctx, opts);
    });
}
