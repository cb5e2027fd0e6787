/**
 * `ray-gpu render`: one YAML file per Kubernetes object, plus `plan.json`, byte-stable, written safely:
 * - into a fresh temporary folder beside the output folder, which is then swapped in by rename, so a failure (a full
 *   disk, a bad name) leaves the previous output as it was and never half the files;
 * - never over `/`, the home folder, a folder holding a Pulumi project, or a folder with files this command did not
 *   write (its manifest, `.ray-gpu-render.json`, lists what it wrote), unless `--force`;
 * - never through a symbolic link: nothing is written inside the old folder, and a link as the output folder itself
 *   is refused.
 */
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from "node:path";
import { stableJson, stableYaml } from "../../core/serialize";
import type { StackPlan } from "../../workloads/stack";
import { describeErrno, isErrnoError } from "../input/file";
import { UsageError } from "../io";
import { planDocument } from "../plan/document";

/** The manifest a render leaves in its folder: which files it wrote, so the next render knows the folder is its own. */
export const RENDER_MANIFEST = ".ray-gpu-render.json";

/** File name of a rendered object: `<kind>-<name>.yaml`, lowercase. */
export function objectFileName(kind: string, name: string): string {
  return `${kind.toLowerCase()}-${name}.yaml`;
}

/** Options of {@link writeRender}. */
export interface WriteRenderOptions {
  /**
   * Replace a folder that holds files this command did not write (they are deleted with the old folder).
   * @default false
   */
  readonly force?: boolean;
  /**
   * Folders the output folder must not hold (it would be replaced with them): the project folder, say.
   * @default [process.cwd()]
   */
  readonly keep?: readonly string[];
  /**
   * Writes one file (tests pass one that fails part-way, as a full disk would).
   * @default fs.writeFileSync, refusing to overwrite
   */
  readonly writeFile?: (path: string, text: string) => void;
  /**
   * Told about a problem that did not stop the render (an old folder that could not be removed).
   * @default - ignored
   */
  readonly warn?: (message: string) => void;
}

const writeNew = (path: string, text: string) => writeFileSync(path, text, { flag: "wx" });

/** The stack's files by name: one per object, plus plan.json and the manifest. */
function renderedFiles(stack: string, plan: StackPlan): Map<string, string> {
  const files = new Map<string, string>();
  for (const obj of [...plan.shared, ...plan.objects.flatMap((o) => o.objects)]) {
    files.set(objectFileName(obj.kind, obj.metadata.name), stableYaml(obj));
  }
  files.set("plan.json", stableJson(planDocument(stack, plan)));
  files.set(RENDER_MANIFEST, stableJson({ renderedBy: "ray-gpu render", stack, files: [...files.keys()].sort() }));
  return files;
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

/** Files the manifest of `dir` says a render wrote; empty when there is no readable manifest. */
function manifestFiles(dir: string): Set<string> {
  try {
    const doc = JSON.parse(readFileSync(join(dir, RENDER_MANIFEST), "utf8")) as { files?: unknown };
    return new Set(Array.isArray(doc.files) ? doc.files.filter((f): f is string => typeof f === "string") : []);
  } catch {
    return new Set();
  }
}

/** Whether `dir` is `inner` or a folder above it. */
const holds = (dir: string, inner: string) => {
  const rel = relative(dir, inner);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/**
 * `path` with every symbolic link of its existing part resolved (the part that does not exist yet is appended as
 * given), so that a link in a parent folder cannot make a protected folder look like another one.
 */
export function canonicalPath(path: string): string {
  const missing: string[] = [];
  let existing = resolve(path);
  for (;;) {
    try {
      return join(realpathSync(existing), ...missing.reverse());
    } catch (err) {
      const parent = dirname(existing);
      if (!isErrnoError(err) || (err.code !== "ENOENT" && err.code !== "ENOTDIR") || parent === existing) throw err;
      missing.push(basename(existing));
      existing = parent;
    }
  }
}

/**
 * Folders never replaced, even with `--force`: the root and the folders right below it (`/tmp`, `/etc`), the home folder
 * and any folder above it, and any folder holding the working folder or the project. Compared after resolving links.
 */
function checkNotProtected(out: string, keep: readonly string[]): void {
  const real = canonicalPath(out);
  const root = parse(real).root;
  const depth = relative(root, real).split(sep).filter(Boolean).length;
  const kept = [homedir(), ...keep].map(canonicalPath).find((k) => holds(real, k));
  if (depth < 2 || kept !== undefined)
    throw new UsageError(
      `refusing to render into ${out}${kept ? ` (it holds ${kept})` : ""}: give a folder of its own, e.g. out/<stack>`,
    );
}

/** Refuses output folders a render must never replace. */
function checkTarget(out: string, force: boolean, keep: readonly string[]): void {
  checkNotProtected(out, keep);
  let stats: ReturnType<typeof lstatSync> | undefined;
  try {
    stats = lstatOrUndefined(out);
  } catch (err) {
    if (!isErrnoError(err)) throw err;
    const why = err.code === "ENOTDIR" ? "a folder above it is not a folder" : describeErrno(err, out);
    throw new UsageError(`--out ${out}: ${why}`);
  }
  if (stats === undefined) return;
  if (stats.isSymbolicLink())
    throw new UsageError(`--out ${out} is a symbolic link; give the real folder (renders never follow links)`);
  if (!stats.isDirectory()) throw new UsageError(`--out ${out} exists and is not a folder`);
  const entries = readdirSync(out);
  if (entries.some((f) => /^Pulumi(\..+)?\.yaml$/.test(f)))
    throw new UsageError(`${out} holds a Pulumi project; render into a folder of its own, e.g. out/<stack>`);
  const ours = manifestFiles(out);
  const foreign = entries.filter((f) => f !== RENDER_MANIFEST && !ours.has(f));
  if (foreign.length === 0 || force) return;
  const older = !entries.includes(RENDER_MANIFEST) && entries.includes("plan.json");
  throw new UsageError(
    `${out} holds files this command did not write (${foreign.slice(0, 5).join(", ")}` +
      `${foreign.length > 5 ? `, and ${foreign.length - 5} more` : ""}); render into an empty or new folder, ` +
      `or pass --force to replace the folder and everything in it` +
      (older ? ` (a render by an older ray-gpu keeps no ${RENDER_MANIFEST}: --force once is enough)` : ""),
  );
}

/** Writes every file into a new temporary folder beside `out`; removes it again on any failure. */
function writeStaging(out: string, files: Map<string, string>, writeFile = writeNew): string {
  // mkdirSync (not mkdtemp, which makes the folder 0700): the render keeps the permissions a new folder gets.
  const staging = join(dirname(out), `.${basename(out)}.rendering-${process.pid}-${randomBytes(6).toString("hex")}`);
  mkdirSync(staging);
  try {
    for (const [name, text] of files) writeFile(join(staging, name), text);
    return staging;
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Puts `staging` in place of `out` with two renames: the old folder is moved aside, the new one renamed in (between
 * the two, for an instant, `out` does not exist; a failure of the second puts the old one back). Removing the old
 * folder afterwards is best effort: the render is in place either way.
 * @returns the old folder if it could not be removed
 */
function swapIn(staging: string, out: string): string | undefined {
  const old = lstatOrUndefined(out) ? `${staging}.old` : undefined;
  if (old) renameSync(out, old);
  try {
    renameSync(staging, out);
  } catch (err) {
    if (old) renameSync(old, out);
    throw err;
  }
  if (!old) return undefined;
  try {
    rmSync(old, { recursive: true, force: true });
    return undefined;
  } catch {
    return old;
  }
}

/** {@link writeStaging}, its file-system errors as a {@link UsageError} (the output folder is not touched yet). */
function writeStagingOrThrow(
  out: string,
  outDir: string,
  files: Map<string, string>,
  writeFile: WriteRenderOptions["writeFile"],
): string {
  try {
    return writeStaging(out, files, writeFile);
  } catch (err) {
    if (isErrnoError(err))
      throw new UsageError(`could not write the render: ${describeErrno(err)}; ${outDir} is unchanged`);
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
 * as a whole (a deleted workload leaves no stale manifest).
 * @returns the written file names, sorted (the manifest not included).
 * @throws UsageError when the folder may not be replaced, or a write fails (the previous output is then unchanged)
 */
export function writeRender(
  stack: string,
  plan: StackPlan,
  outDir: string,
  options: WriteRenderOptions = {},
): string[] {
  const out = resolve(outDir);
  checkTarget(out, options.force ?? false, options.keep ?? [process.cwd()]);
  const files = renderedFiles(stack, plan);
  makeParent(out);
  const staging = writeStagingOrThrow(out, outDir, files, options.writeFile);
  try {
    const leftOver = swapIn(staging, out);
    if (leftOver) options.warn?.(`the previous render was moved to ${leftOver} and could not be removed; delete it`);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (isErrnoError(err))
      throw new UsageError(
        `could not put the render in place: ${describeErrno(err)}; ${outDir} is unchanged` +
          (err.code === "EBUSY" || err.code === "EXDEV"
            ? " (render cannot replace a mount point: give a folder inside it)"
            : ""),
      );
    throw err;
  }
  return [...files.keys()].filter((f) => f !== RENDER_MANIFEST).sort();
}
