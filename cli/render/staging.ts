/**
 * The first step of a render: every file written into a new temporary folder beside the output folder, which
 * ./write.ts then swaps in. Each file's text is made when it is written and dropped right after (only its checksum is
 * kept, for the manifest), so a render holds one file's text at a time. A file the previous render already holds with
 * the same bytes (its checksum proved when the old folder was inventoried) is hard-linked from it instead: an
 * unchanged re-render creates no file content at all, and removing the old folder after the swap frees nothing but
 * names. A link that fails (a file system without hard links) falls back to writing the file.
 */
import { closeSync, linkSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { createHash, randomBytes, type Hash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { manifestText, RENDER_MANIFEST, sha256 } from "./ownership";

/** A file's text, whole, or in pieces for a file too large to hold at once (plan.json), written as they are made. */
export type FileText = string | Iterable<string>;

/** A previous render whose unchanged files may be linked: its folder and its own files' checksums by name. */
export interface Reuse {
  readonly dir: string;
  readonly sums: ReadonlyMap<string, string>;
}

/** Writes one file from its pieces, in order; refuses to replace an existing file. */
export function writeNew(path: string, pieces: Iterable<string>): void {
  const fd = openSync(path, "wx");
  try {
    for (const piece of pieces) writeSync(fd, piece);
  } finally {
    closeSync(fd);
  }
}

/** `pieces`, each added to `hash` as it is taken. */
function* hashed(pieces: Iterable<string>, hash: Hash): Generator<string> {
  for (const piece of pieces) {
    hash.update(piece);
    yield piece;
  }
}

/** Links `name` from the previous render into `staging` when it holds these very bytes; false when it does not. */
function linked(name: string, sum: string, staging: string, reuse: Reuse | undefined): boolean {
  if (reuse?.sums.get(name) !== sum) return false;
  try {
    linkSync(join(reuse.dir, name), join(staging, name));
    return true;
  } catch {
    return false;
  }
}

/** A render being written into its temporary folder, file by file. */
export interface Staging {
  /** The temporary folder. */
  readonly dir: string;
  /** Makes the file `name` and writes it (or links it from the previous render); a name may be added once. */
  add(name: string, make: () => FileText): void;
  /** Writes the manifest of every file added. @returns the names added, sorted (the manifest not among them) */
  finish(): string[];
  /** Removes the temporary folder and everything in it. */
  abort(): void;
}

/** Writes one file, whole or in pieces, or links it; returns its checksum. */
function put(path: string, text: FileText, linkFrom: (sum: string) => boolean, writeFile: typeof writeNew): string {
  if (typeof text === "string") {
    const sum = sha256(text);
    if (!linkFrom(sum)) writeFile(path, [text]);
    return sum;
  }
  const hash = createHash("sha256");
  writeFile(path, hashed(text, hash));
  return hash.digest("hex");
}

/**
 * Opens a new temporary folder beside `out` for the render of `stack`: mkdirSync (not mkdtemp, which makes the
 * folder 0700), so the render keeps the permissions a new folder gets.
 */
export function openStaging(out: string, stack: string, reuse: Reuse | undefined, writeFile = writeNew): Staging {
  const dir = join(dirname(out), `.${basename(out)}.rendering-${process.pid}-${randomBytes(6).toString("hex")}`);
  mkdirSync(dir);
  const sums = new Map<string, string>();
  return {
    dir,
    add(name, make) {
      if (sums.has(name)) throw new Error(`render: two objects write ${name}`);
      sums.set(
        name,
        put(join(dir, name), make(), (sum) => linked(name, sum, dir, reuse), writeFile),
      );
    },
    finish() {
      writeFile(join(dir, RENDER_MANIFEST), [manifestText(stack, sums)]);
      return [...sums.keys()].sort();
    },
    abort: () => rmSync(dir, { recursive: true, force: true }),
  };
}
