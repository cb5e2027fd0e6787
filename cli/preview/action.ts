/** What `ray-gpu preview` does, loaded only when it runs: the Pulumi SDK and the program come with it. */
import { stableJson } from "../../core/serialize";
import type { CommandContext } from "../io";
import { previewStack } from "./run";
import { previewText, previewWideText } from "./text";

/** The options of `ray-gpu preview`. */
export interface PreviewOptions {
  stack: string;
  /** Print the JSON document instead of the tree. @default false */
  json?: boolean;
  /** One line per resource with its full type token, whole name and parent. @default false */
  wide?: boolean;
}

/** Runs the program under Pulumi's mock runtime and prints what it registered (text tree, wide table or JSON). */
export async function runPreview(ctx: CommandContext, opts: PreviewOptions): Promise<void> {
  ctx.io.progress?.(`previewing stack ${opts.stack}: running the Pulumi program offline under mocks…`);
  const doc = await previewStack(ctx.dir(), opts.stack);
  const text = opts.wide ? previewWideText : previewText;
  ctx.io.out(opts.json ? stableJson(doc) : text(opts.stack, doc));
}
