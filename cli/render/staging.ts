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

/**
 * The files of one render by name, each with a function that makes its text (called once, when it is written): the
 * whole text, or the text in pieces for a file too large to hold at once (plan.json), written as they are made.
 */
export type RenderFiles = ReadonlyMap<string, () => string | Iterable<string>>;

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

/** What one render writes: the stack's name (for the manifest), its files, and the previous render to link from. */
export interface StagedRender {
  readonly stack: string;
  readonly files: RenderFiles;
  readonly reuse: Reuse | undefined;
}

/** Makes and writes (or links) every file, then the manifest of their checksums. */
function fill(staging: string, { stack, files, reuse }: StagedRender, writeFile: typeof writeNew) {
  const sums = new Map<string, string>();
  for (const [name, make] of files) {
    const text = make();
    if (typeof text === "string") {
      const sum = sha256(text);
      if (!linked(name, sum, staging, reuse)) writeFile(join(staging, name), [text]);
      sums.set(name, sum);
      continue;
    }
    const hash = createHash("sha256");
    writeFile(join(staging, name), hashed(text, hash));
    sums.set(name, hash.digest("hex"));
  }
  writeFile(join(staging, RENDER_MANIFEST), [manifestText(stack, sums)]);
}

/**
 * Writes the render of `stack` into a new temporary folder beside `out`; removes it again on any failure.
 * @returns the temporary folder
 */
export function writeStaging(out: string, render: StagedRender, writeFile: typeof writeNew = writeNew): string {
  // mkdirSync (not mkdtemp, which makes the folder 0700): the render keeps the permissions a new folder gets.
  const staging = join(dirname(out), `.${basename(out)}.rendering-${process.pid}-${randomBytes(6).toString("hex")}`);
  mkdirSync(staging);
  try {
    fill(staging, render, writeFile);
    return staging;
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}
