/** What `ray-gpu render` does, loaded only when it runs. */
import { loadRuntimePackage } from "../../io/runtime-package";
import type { CommandContext } from "../io";
import { writeRender } from "./write";
import { planStackFile } from "../input/stack-file";
import { wrapped } from "../output/columns";

/** What render says it wrote: the folder (wrapped if its path is long), then each file on a line of its own. */
export function renderedText(out: string, files: readonly string[]): string[] {
  return [...wrapped(`Rendered ${files.length} file(s) to ${out}:`), ...files.map((f) => `  ${f}`)];
}

/** The options of `ray-gpu render`. */
export interface RenderOptions {
  stack: string;
  out: string;
  /** Replace a folder holding files render did not write. @default false */
  force?: boolean;
}

/** Writes one YAML file per object, plus plan.json, and says which, one per line. */
export function runRender(ctx: CommandContext, opts: RenderOptions): void {
  const { plan } = planStackFile(ctx.dir(), opts.stack, { runtime: loadRuntimePackage(), requireRender: true });
  const files = writeRender(opts.stack, plan, opts.out, {
    force: opts.force ?? false,
    keep: [ctx.dir(), process.cwd()],
    warn: (m) => ctx.io.err(`ray-gpu: warning: ${m}\n`),
  });
  ctx.io.out(`${renderedText(opts.out, files).join("\n")}\n`);
}
