/** Folders a render never replaces, even with `--force`, judged after resolving symbolic links. */
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from "node:path";
import { isErrnoError } from "../input/file";
import { UsageError } from "../io";

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
export function checkNotProtected(out: string, keep: readonly string[]): void {
  const real = canonicalPath(out);
  const root = parse(real).root;
  const depth = relative(root, real).split(sep).filter(Boolean).length;
  const kept = [homedir(), ...keep].map(canonicalPath).find((k) => holds(real, k));
  if (depth < 2 || kept !== undefined)
    throw new UsageError(
      `refusing to render into ${out}${kept ? ` (it holds ${kept})` : ""}: give a folder of its own, e.g. out/<stack>`,
    );
}
