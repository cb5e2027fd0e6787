/**
 * `ray-gpu preview`: every resource `pulumi up` would create, from the real program under Pulumi's mock runtime. The
 * Pulumi SDK is loaded only here, when this command runs: the other commands never pay for it.
 */
import type { Command } from "commander";
import type { CommandContext } from "../io";

export function registerPreview(program: Command, ctx: CommandContext): void {
  program
    .command("preview")
    .description(
      "List every resource `pulumi up` would create for the stack, with inputs (secrets redacted) and what each waits for, offline under Pulumi's mock runtime; exit 1 when the deploy simulation finds a wait that never ends or a pod no node can take.",
    )
    .requiredOption("-s, --stack <name>", "stack whose Pulumi.<name>.yaml to preview")
    .option("--json", 'print { "resources": [ { "type", "name", "parent", "dependsOn", "inputs" } ] }')
    .option("--wide", "one line per resource with its full type token, whole name and parent (wider than 120 columns)")
    .action(async (opts: { stack: string; json?: boolean; wide?: boolean }) => {
      ctx.io.progress?.(`previewing stack ${opts.stack}: running the Pulumi program offline under mocks…`);
      const [{ previewStack }, { previewText, previewWideText }, { stableJson }] = await Promise.all([
        import("../preview/run.js"),
        import("../preview/view.js"),
        import("../../core/serialize.js"),
      ]);
      const doc = await previewStack(ctx.dir(), opts.stack);
      const text = opts.wide ? previewWideText : previewText;
      ctx.io.out(opts.json ? stableJson(doc) : text(opts.stack, doc));
    });
}
