/** Stack folders and plan digests for the tune tests. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planStackFile } from "../../../cli/input/stack-file";
import { renderedPlan } from "../../../cli/tune/action";
import { runtime } from "../../helpers/fixtures";

/** Temporary stack folders, each removed by `removeAll` (call it in afterEach). */
export class StackFolders {
  private readonly dirs: string[] = [];

  /** A folder holding `Pulumi.<stack>.yaml` with `text`. */
  make(stack: string, text: string): string {
    const dir = mkdtempSync(join(tmpdir(), "tune-"));
    this.dirs.push(dir);
    writeFileSync(join(dir, `Pulumi.${stack}.yaml`), text);
    return dir;
  }

  removeAll(): void {
    this.dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  }
}

/** The plan digest the tuning document of `workload` carries in `stack` of `dir`, read as tune reads it. */
export function digestOf(dir: string, stack: string, workload: string): string {
  const { plan, file } = planStackFile(dir, stack, { runtime });
  return renderedPlan(plan, workload, file).digest;
}

/** `text` with `line` added to the entry of workload `name` (after its `name:` line). */
export const withLine = (text: string, name: string, line: string) =>
  text.replace(`      name: ${name}\n`, `      name: ${name}\n      ${line}\n`);
