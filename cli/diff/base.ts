/**
 * The base of `ray-gpu diff`: a stack file as it is at a git ref (read with `git show <ref>:<path>`, nothing checked out)
 * or in a folder holding the base's `Pulumi.<stack>.yaml`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { readInputFile } from "../input-file";
import { UsageError } from "../io";

/** Where the base comes from: a folder, or a git ref of the repository holding `dir`. */
export type BaseSource =
  { readonly kind: "folder"; readonly dir: string } | { readonly kind: "git"; readonly ref: string };

/** A folder if `base` names one, else a git ref. */
export function baseSource(base: string, cwd: string): BaseSource {
  const dir = resolve(cwd, base);
  return existsSync(dir) && statSync(dir).isDirectory() ? { kind: "folder", dir } : { kind: "git", ref: base };
}

function git(args: readonly string[], cwd: string): string {
  return execFileSync("git", [...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The text of `Pulumi.<stack>.yaml` at the base, or undefined when the base has no such stack. */
export function baseStackText(source: BaseSource, dir: string, stack: string): string | undefined {
  const name = `Pulumi.${stack}.yaml`;
  if (source.kind === "folder") {
    const file = join(source.dir, name);
    return existsSync(file) ? readInputFile(file, "base stack file") : undefined;
  }
  let top: string;
  try {
    top = git(["rev-parse", "--show-toplevel"], dir).trim();
    git(["rev-parse", "--verify", "--quiet", `${source.ref}^{commit}`], dir);
  } catch {
    throw new UsageError(`--base ${source.ref} is neither a folder nor a commit of the git repository at ${dir}`);
  }
  const path = relative(top, resolve(dir, name)).split("\\").join("/");
  try {
    return git(["show", `${source.ref}:${path}`], dir);
  } catch {
    return undefined;
  }
}

/** Stack names at the base (for `--all-stacks`). */
export function baseStackNames(source: BaseSource, dir: string): string[] {
  const pick = (files: string[]) =>
    files.map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f.split("/").pop() ?? "")?.[1]).filter((s): s is string => !!s);
  if (source.kind === "folder") {
    return pick(readdirSync(source.dir));
  }
  const top = git(["rev-parse", "--show-toplevel"], dir).trim();
  const prefix = relative(top, resolve(dir)).split("\\").join("/");
  try {
    // `<ref>:<folder>` is the folder's tree at the ref; its entries are listed by name, whatever the working folder.
    return pick(
      git(["ls-tree", "--name-only", `${source.ref}:${prefix}`], top)
        .split("\n")
        .filter(Boolean),
    );
  } catch {
    return [];
  }
}
