/**
 * The base of `ray-gpu diff`: a stack file (and the project's `Pulumi.yaml`) as it is at a git ref (read with `git show
 * <ref>:<path>`, nothing checked out) or in a folder holding the base's `Pulumi.<stack>.yaml`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { MAX_INPUT_BYTES, readInputFile } from "../input/file";
import { UsageError } from "../io";
import { stackNames } from "../input/stack-file";

/**
 * Where the base comes from: a folder, or a commit of the git repository holding the stacks' folder, with that
 * folder's path inside the repository (both resolved once, when the source is made).
 */
export type BaseSource =
  | { readonly kind: "folder"; readonly dir: string }
  | { readonly kind: "git"; readonly ref: string; readonly top: string; readonly prefix: string };

function git(args: readonly string[], cwd: string, input?: string): string {
  // maxBuffer above the input cap: a larger answer must never be mistaken for a missing file.
  const maxBuffer = MAX_INPUT_BYTES * 2;
  const stdio = [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] as const;
  return execFileSync("git", [...args], { cwd, encoding: "utf8", stdio: [...stdio], maxBuffer, input });
}

/** The type and size of `<ref>:<path>` in one `git cat-file --batch-check`, or undefined when the ref lacks it. */
function objectAt(top: string, object: string): { type: string; bytes: number } | undefined {
  const line = git(["cat-file", "--batch-check"], top, `${object}\n`).trim();
  if (line.endsWith(" missing")) return undefined;
  const found = /^[0-9a-f]+ (\w+) (\d+)$/.exec(line);
  if (!found) throw new Error(`git cat-file answered "${line}"`);
  return { type: found[1]!, bytes: Number(found[2]) };
}

/** Whether `git <args>` succeeds (an existence check: a non-zero exit says no). */
function gitSucceeds(args: readonly string[], cwd: string): boolean {
  try {
    git(args, cwd);
    return true;
  } catch {
    return false;
  }
}

/** The top folder of the git repository holding `dir`, or "" outside one. */
function repositoryTop(dir: string): string {
  try {
    return git(["rev-parse", "--show-toplevel"], dir).trim();
  } catch {
    return "";
  }
}

/** A folder entry of any kind, a broken or looping link included. */
function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * A folder if `base` names one, else a commit of the repository holding `dir` (the stacks' folder). The gate fails
 * closed: an empty base, the stacks' own folder, and a name that is both a folder and a commit are refused.
 * @throws UsageError when it is neither, or ambiguous
 */
export function baseSource(base: string, cwd: string, dir: string): BaseSource {
  if (base.trim() === "") throw new UsageError("--base is empty: give a git ref (e.g. origin/main) or a folder");
  const folder = resolve(cwd, base);
  const isFolder = existsSync(folder) && statSync(folder).isDirectory();
  const top = repositoryTop(dir);
  const isCommit = top !== "" && gitSucceeds(["rev-parse", "--verify", "--quiet", `${base}^{commit}`], dir);
  if (isFolder && isCommit)
    throw new UsageError(
      `--base ${base} is both a folder (${folder}) and a git ref; write ./${base} for the folder, or the ref in full ` +
        `(refs/heads/${base}, or a commit id)`,
    );
  if (isFolder) {
    if (resolve(folder) === resolve(dir))
      throw new UsageError(`--base ${base} is the stacks' own folder: the change would be compared with itself`);
    return { kind: "folder", dir: folder };
  }
  if (isCommit) return { kind: "git", ref: base, top, prefix: relative(top, resolve(dir)).split("\\").join("/") };
  throw new UsageError(`--base ${base} is neither a folder nor a commit of the git repository at ${dir}`);
}

/** The path of `name` inside the ref's tree (`<ref>:<prefix>/<name>`). */
const atRef = (source: BaseSource & { kind: "git" }, name: string) =>
  `${source.ref}:${source.prefix ? `${source.prefix}/` : ""}${name}`;

/**
 * The text of `name` in the base's stacks folder, or undefined when the base has no such file. Anything else (a file
 * over the input cap, a link loop, a git failure) is an error: a stack must never count as new because it could not
 * be read.
 */
function baseFileText(source: BaseSource, name: string, what: string): string | undefined {
  if (source.kind === "folder") {
    const file = join(source.dir, name);
    return entryExists(file) ? readInputFile(file, what) : undefined;
  }
  const object = atRef(source, name);
  try {
    const found = objectAt(source.top, object);
    if (!found) return undefined;
    const { type, bytes } = found;
    if (type !== "blob") throw new UsageError(`${what} ${object} is a ${type}, not a file`);
    if (bytes > MAX_INPUT_BYTES)
      throw new UsageError(
        `${what} ${object} is ${bytes} bytes, over the ${MAX_INPUT_BYTES / 1024 / 1024} MiB input limit`,
      );
    return git(["show", object], source.top);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${what} ${object}: ${(err as Error).message.split("\n")[0]}`);
  }
}

/** The text of `Pulumi.<stack>.yaml` at the base, or undefined when the base has no such stack. */
export function baseStackText(source: BaseSource, stack: string): string | undefined {
  return baseFileText(source, `Pulumi.${stack}.yaml`, "base stack file");
}

/**
 * The text of the base's `Pulumi.yaml`, or undefined when it has none: its project config is part of every stack's
 * config at the base (cli/input/project-file.ts reads it).
 */
export function baseProjectText(source: BaseSource): string | undefined {
  return baseFileText(source, "Pulumi.yaml", "base project file");
}

/** Stack names at the base (for `--all-stacks`); none when the stacks' folder did not exist at the ref. */
export function baseStackNames(source: BaseSource): string[] {
  if (source.kind === "folder") return stackNames(readdirSync(source.dir));
  const tree = `${source.ref}:${source.prefix}`;
  try {
    if (!objectAt(source.top, tree)) return [];
    // `<ref>:<folder>` is the folder's tree at the ref; its entries are listed by name, whatever the working folder.
    const listed = git(["ls-tree", "--name-only", tree], source.top);
    return stackNames(listed.split("\n").filter(Boolean));
  } catch (err) {
    throw new UsageError(`cannot list the stacks at ${tree}: ${(err as Error).message.split("\n")[0]}`);
  }
}
