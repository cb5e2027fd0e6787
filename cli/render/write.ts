/**
 * `ray-gpu render`: one YAML file per Kubernetes object, plus `plan.json`, byte-stable, written safely:
 * - into a fresh temporary folder beside the output folder (./staging.ts: one file's text at a time, and the previous
 *   render's unchanged files hard-linked, not rewritten), which is then swapped in by rename, so a failure (a full
 *   disk, a bad name) leaves the previous output as it was and never half the files;
 * - never over `/`, the home folder, or a folder holding a Pulumi project;
 * - never deleting or overwriting a file it cannot prove it wrote (./ownership.ts: the manifest's checksums). A folder
 *   holding such files is refused; with `--force` they are kept, moved into the new render beside its files, unless
 *   one has the name of a file the render writes;
 * - never through a symbolic link: nothing is written inside the old folder, and a link as the output folder itself
 *   is refused.
 */
import { lstatSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { stableYaml } from "../../core/serialize";
import type { KubeObject } from "../../workloads/k8s/types";
import type { RenderedWorkload, StackPlan } from "../../workloads/stack";
import { describeErrno, isErrnoError } from "../input/file";
import { UsageError } from "../io";
import { planJsonPieces } from "../plan/document";
import { inventory, objectFileName, RENDER_MANIFEST, type FolderInventory } from "./ownership";
import { openStaging, type Staging } from "./staging";
import { checkNotProtected } from "./protected";

export { objectFileName, RENDER_MANIFEST } from "./ownership";

/** Options of {@link writeRender}. */
export interface WriteRenderOptions {
  /**
   * Render into a folder that holds files this command cannot prove it wrote: they are kept, moved into the new render
   * beside its files (never deleted; one named like a file the render writes is still refused).
   * @default false
   */
  readonly force?: boolean;
  /**
   * Folders the output folder must not hold (it would be replaced with them): the project folder, say.
   * @default [process.cwd()]
   */
  readonly keep?: readonly string[];
  /**
   * Writes one file from its pieces, in order (tests pass one that fails part-way, as a full disk would).
   * @default a new file (never an existing one) written piece by piece
   */
  readonly writeFile?: (path: string, pieces: Iterable<string>) => void;
  /**
   * Told about a problem that did not stop the render (an old folder that could not be removed).
   * @default - ignored
   */
  readonly warn?: (message: string) => void;
}

/**
 * How a render gets its plan: planning with each workload's objects handed to `renderedTo` as they are made (so they
 * are written at once and never all held), or a plan made already.
 */
export type PlanWith = (renderedTo: (rendered: RenderedWorkload) => void) => StackPlan;

/** A plan made already, as {@link PlanWith}: its workloads' objects handed over in order. */
const planned =
  (plan: StackPlan): PlanWith =>
  (renderedTo) => {
    plan.objects.forEach(renderedTo);
    return plan;
  };

/** Plans the stack into `staging`: each object as it is made, then the shared objects and plan.json. */
function stageStack(staging: Staging, stack: string, planWith: PlanWith): string[] {
  const add = (obj: KubeObject) => staging.add(objectFileName(obj.kind, obj.metadata.name), () => stableYaml(obj));
  const plan = planWith((rendered) => rendered.objects.forEach(add));
  plan.shared.forEach(add);
  staging.add("plan.json", () => planJsonPieces(stack, plan));
  return staging.finish();
}

/** `lstat`, or undefined when nothing is there. */
function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if (isErrnoError(err) && err.code === "ENOENT") return undefined;
    throw err;
  }
}

/** The output folder as it is: undefined when it does not exist yet; refused when it is not a folder of its own. */
function existingFolder(out: string): FolderInventory | undefined {
  let stats: ReturnType<typeof lstatSync> | undefined;
  try {
    stats = lstatOrUndefined(out);
  } catch (err) {
    if (!isErrnoError(err)) throw err;
    const why = err.code === "ENOTDIR" ? "a folder above it is not a folder" : describeErrno(err, out);
    throw new UsageError(`--out ${out}: ${why}`);
  }
  if (stats === undefined) return undefined;
  if (stats.isSymbolicLink())
    throw new UsageError(`--out ${out} is a symbolic link; give the real folder (renders never follow links)`);
  if (!stats.isDirectory()) throw new UsageError(`--out ${out} exists and is not a folder`);
  if (readdirSync(out).some((f) => /^Pulumi(\..+)?\.yaml$/.test(f)))
    throw new UsageError(`${out} holds a Pulumi project; render into a folder of its own, e.g. out/<stack>`);
  return inventory(out);
}

/** `names`, the first five of them and how many more. */
const some = (names: readonly string[]) =>
  `${names.slice(0, 5).join(", ")}${names.length > 5 ? `, and ${names.length - 5} more` : ""}`;

/** Why an old render's manifest vouched for fewer files, for the refusals below. */
const olderNote = (inv: FolderInventory) =>
  inv.olderManifest
    ? ` (its manifest is an older ray-gpu's, with no checksums: only files that are a render's by their content, ` +
      `an object labelled as ours or a plan, count as its own)`
    : "";

/**
 * Refuses output folders a render must never replace, and, without `force`, one holding foreign files.
 * @returns what the existing folder holds, or undefined when there is none
 */
function checkTarget(out: string, force: boolean, keep: readonly string[]) {
  checkNotProtected(out, keep);
  const inv = existingFolder(out);
  if (!inv || inv.foreign.length === 0 || force) return inv;
  throw new UsageError(
    `${out} holds files this command did not write (${some(inv.foreign)}); render into an empty or new folder, ` +
      `or pass --force to keep them beside the render (they are never deleted)${olderNote(inv)}`,
  );
}

/** Refuses (with `--force`) foreign files named like a file of the render: they would be overwritten. */
function checkClashes(out: string, inv: FolderInventory | undefined, names: readonly string[]): void {
  const clashing = inv?.foreign.filter((f) => f === RENDER_MANIFEST || names.includes(f)) ?? [];
  if (clashing.length === 0) return;
  throw new UsageError(
    `${out} holds files render would overwrite but cannot prove it wrote (${some(clashing)}: changed since, a link, ` +
      `or another tool's); move them away, render never overwrites them, even with --force${olderNote(inv!)}`,
  );
}

/** Moves the entries `names` from folder `from` to folder `to`; on a failure, moves back those it moved. */
function moveEntries(names: readonly string[], from: string, to: string): void {
  const moved: string[] = [];
  try {
    for (const name of names) {
      renameSync(join(from, name), join(to, name));
      moved.push(name);
    }
  } catch (err) {
    for (const name of moved) renameSync(join(to, name), join(from, name));
    throw err;
  }
}

/**
 * Deletes the files `names` of `dir` one by one (never anything else), then `dir` if that left it empty.
 * @returns `dir` if anything is left in it
 */
function removeFiles(dir: string, names: readonly string[]): string | undefined {
  try {
    for (const name of names) rmSync(join(dir, name), { force: true });
    rmdirSync(dir);
    return undefined;
  } catch {
    return dir;
  }
}

/** Deletes the old render: only the files proved ours and our manifest (a file that appeared since is left). */
const removeOld = (old: string, inv: FolderInventory) =>
  removeFiles(old, [...inv.ours, ...(inv.ownManifest ? [RENDER_MANIFEST] : [])]);

/**
 * Puts `staging` in place of `out` with two renames, after moving the foreign entries of `out` into it: the old
 * folder is moved aside, the new one renamed in (between the two, for an instant, `out` does not exist; a failure
 * puts everything back). Removing the old render afterwards is best effort: the render is in place either way.
 * @returns the old folder if it could not be removed
 */
function swapIn(staging: string, out: string, inv: FolderInventory | undefined): string | undefined {
  if (!inv) {
    renameSync(staging, out);
    return undefined;
  }
  moveEntries(inv.foreign, out, staging);
  const old = `${staging}.old`;
  try {
    renameSync(out, old);
  } catch (err) {
    moveEntries(inv.foreign, staging, out);
    throw err;
  }
  try {
    renameSync(staging, out);
  } catch (err) {
    renameSync(old, out);
    moveEntries(inv.foreign, staging, out);
    throw err;
  }
  return removeOld(old, inv);
}

/**
 * Writes the render into a temporary folder beside `out` (./staging.ts), planning as it goes; on any failure the
 * folder is removed again, and a file-system error becomes a {@link UsageError} (the output folder is not touched yet).
 * @returns the folder and the names of the files written, sorted
 */
function stageOrThrow(
  out: string,
  render: { stack: string; planWith: PlanWith; inv: FolderInventory | undefined; outDir: string },
  writeFile: WriteRenderOptions["writeFile"],
): { staging: Staging; names: string[] } {
  let staging: Staging | undefined;
  try {
    staging = openStaging(out, render.stack, render.inv && { dir: out, sums: render.inv.reusable }, writeFile);
    const names = stageStack(staging, render.stack, render.planWith);
    checkClashes(out, render.inv, names);
    return { staging, names };
  } catch (err) {
    staging?.abort();
    if (isErrnoError(err))
      throw new UsageError(`could not write the render: ${describeErrno(err)}; ${render.outDir} is unchanged`);
    throw err;
  }
}

/** Makes the parent folder of `out`, with its own message when it cannot be made. */
function makeParent(out: string): void {
  const parent = dirname(out);
  const stats = lstatOrUndefined(parent);
  if (stats && !stats.isDirectory() && !stats.isSymbolicLink())
    throw new UsageError(`--out ${out}: ${parent} is not a folder`);
  try {
    if (!stats) mkdirSync(parent, { recursive: true });
  } catch (err) {
    if (isErrnoError(err)) throw new UsageError(`--out ${out}: cannot create ${describeErrno(err, parent)}`);
    throw err;
  }
}

/**
 * Writes the stack's objects, `plan.json` and the manifest into `outDir`, replacing what a previous render wrote there
 * as a whole (a deleted workload leaves no stale manifest). Given a {@link PlanWith}, it plans the stack while it
 * writes, and holds no workload's objects longer than it takes to write them.
 * @returns the written file names, sorted (the manifest not included).
 * @throws UsageError when the folder may not be replaced, or a write fails (the previous output is then unchanged);
 *   whatever planning throws (the previous output is then unchanged too)
 */
export function writeRender(
  stack: string,
  source: StackPlan | PlanWith,
  outDir: string,
  options: WriteRenderOptions = {},
): string[] {
  const out = resolve(outDir);
  const inv = checkTarget(out, options.force ?? false, options.keep ?? [process.cwd()]);
  makeParent(out);
  const planWith = typeof source === "function" ? source : planned(source);
  const { staging, names } = stageOrThrow(out, { stack, planWith, inv, outDir }, options.writeFile);
  try {
    const leftOver = swapIn(staging.dir, out, inv);
    if (leftOver)
      options.warn?.(
        `the previous render was moved to ${leftOver} and could not be removed whole; check it and delete it`,
      );
  } catch (err) {
    // Only the files this render wrote: a foreign file that could not be moved back stays, with the folder.
    const kept = removeFiles(staging.dir, [...names, RENDER_MANIFEST]);
    if (kept) options.warn?.(`files kept from ${outDir} are left in ${kept}; move them back`);
    if (isErrnoError(err))
      throw new UsageError(
        `could not put the render in place: ${describeErrno(err)}; ${outDir} is unchanged` +
          (err.code === "EBUSY" || err.code === "EXDEV"
            ? " (render cannot replace a mount point: give a folder inside it)"
            : ""),
      );
    throw err;
  }
  return names;
}
