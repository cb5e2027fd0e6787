/** What `ray-gpu preview` does, loaded only when it runs: the Pulumi SDK and the program come with it. */
import { resolve } from "node:path";
import { stableJson } from "../../core/serialize";
import { UsageError, type CommandContext } from "../io";
import { DEFAULT_PROGRAM_STACK, previewProgram } from "./program";
import { previewStack } from "./run";
import { previewText, previewWideText } from "./text";

/** The options of `ray-gpu preview`. */
export interface PreviewOptions {
  /** The stack: its `Pulumi.<stack>.yaml` gives the config. Required without `program`. @default "preview" with `program` */
  stack?: string;
  /**
   * Folder of a Pulumi project (Node.js) to run instead of the bundled program, with its own packages.
   * @default - the bundled program (stacks/index.ts) with the stack file of `-C`'s folder
   */
  program?: string;
  /** Print the JSON document instead of the tree. @default false */
  json?: boolean;
  /** One line per resource with its full type token, whole name and parent. @default false */
  wide?: boolean;
}

/** Runs the program under Pulumi's mock runtime and prints what it registered (text tree, wide table or JSON). */
export async function runPreview(ctx: CommandContext, opts: PreviewOptions): Promise<void> {
  if (opts.program === undefined && opts.stack === undefined)
    throw new UsageError("preview needs --stack <name> (the bundled program) or --program <dir> (your own)");
  const stack = opts.stack ?? DEFAULT_PROGRAM_STACK;
  const what = opts.program === undefined ? `stack ${stack}` : `the program in ${opts.program}`;
  ctx.io.progress?.(`previewing ${what}: running the Pulumi program offline under mocks…`);
  const doc =
    opts.program === undefined
      ? await previewStack(ctx.dir(), stack)
      : await previewProgram(resolve(ctx.dir(), opts.program), opts.stack);
  const text = opts.wide ? previewWideText : previewText;
  ctx.io.out(opts.json ? stableJson(doc) : text(stack, doc));
}
