/**
 * The base of `ray-gpu diff`: a stack file as it is at a git ref (read with `git show <ref>:<path>`, nothing checked out)
 * or in a folder holding the base's `Pulumi.<stack>.yaml`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { readInputFile } from "../input-file";
import { UsageError } from "../io";
import { stackNames } from "../stack-file";

/**
 * Where the base comes from: a folder, or a commit of the git repository holding the stacks' folder, with that
 * folder's path inside the repository (both resolved once, when the source is made).
 */
export type BaseSource =
  | { readonly kind: "folder"; readonly dir: string }
  | { readonly kind: "git"; readonly ref: string; readonly top: string; readonly prefix: string };

function git(args: readonly string[], cwd: string): string {
  return execFileSync("git", [...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/**
 * A folder if `base` names one, else a commit of the repository holding `dir` (the stacks' folder).
 * @throws UsageError when it is neither
 */
export function baseSource(base: string, cwd: string, dir: string): BaseSource {
  const folder = resolve(cwd, base);
  if (existsSync(folder) && statSync(folder).isDirectory()) return { kind: "folder", dir: folder };
  try {
    const top = git(["rev-parse", "--show-toplevel"], dir).trim();
    git(["rev-parse", "--verify", "--quiet", `${base}^{commit}`], dir);
    return { kind: "git", ref: base, top, prefix: relative(top, resolve(dir)).split("\\").join("/") };
  } catch {
    throw new UsageError(`--base ${base} is neither a folder nor a commit of the git repository at ${dir}`);
  }
}

/** The text of `Pulumi.<stack>.yaml` at the base, or undefined when the base has no such stack. */
export function baseStackText(source: BaseSource, stack: string): string | undefined {
  const name = `Pulumi.${stack}.yaml`;
  if (source.kind === "folder") {
    const file = join(source.dir, name);
    return existsSync(file) ? readInputFile(file, "base stack file") : undefined;
  }
  try {
    return git(["show", `${source.ref}:${source.prefix ? `${source.prefix}/` : ""}${name}`], source.top);
  } catch {
    return undefined;
  }
}

/** Stack names at the base (for `--all-stacks`). */
export function baseStackNames(source: BaseSource): string[] {
  if (source.kind === "folder") return stackNames(readdirSync(source.dir));
  try {
    // `<ref>:<folder>` is the folder's tree at the ref; its entries are listed by name, whatever the working folder.
    const listed = git(["ls-tree", "--name-only", `${source.ref}:${source.prefix}`], source.top);
    return stackNames(listed.split("\n").filter(Boolean));
  } catch {
    return [];
  }
}
