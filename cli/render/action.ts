/** What `ray-gpu render` does, loaded only when it runs. */
import { loadRuntimePackage } from "../../io/runtime-package";
import type { CommandContext } from "../io";
import { writeRender } from "./write";
import { planStackFile } from "../input/stack-file";
import type { PlanStackOptions } from "../../workloads/stack";
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
  const runtime = loadRuntimePackage();
  // Planned while written: each workload's objects go to their files as they are made, and are not kept.
  const planWith = (renderedTo: PlanStackOptions["renderedTo"]) =>
    planStackFile(ctx.dir(), opts.stack, { runtime, requireRender: true, renderedTo }).plan;
  const files = writeRender(opts.stack, planWith, opts.out, {
    force: opts.force ?? false,
    keep: [ctx.dir(), process.cwd()],
    warn: (m) => ctx.io.err(`ray-gpu: warning: ${m}\n`),
  });
  ctx.io.out(`${renderedText(opts.out, files).join("\n")}\n`);
}
