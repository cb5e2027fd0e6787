/**
 * One output file (`plan --html`, `report --html`), written the way `render` writes its folder: never through a
 * link, never into a FIFO, device or folder, never over a file `ray-gpu` did not write (the whole file is checked,
 * not a mark that could be quoted in it), and atomically (a temporary file beside it, renamed over it), so a failed
 * write leaves the old file whole. Every refusal names the path.
 */
import { closeSync, lstatSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describeErrno, isErrnoError } from "../input/file";
import { UsageError } from "../io";

/**
 * A kind of file this tool writes, and how to tell one from any other file: `owns` reads the whole of what is there.
 * Only a file it owns is ever replaced.
 */
export interface OwnedFormat {
  /** What such a file is, for the refusal ("a page ray-gpu wrote (unchanged since)"). */
  readonly what: string;
  owns(text: string): boolean;
}

/** The most of an existing file read to decide whether it is ours: larger, it is not one we wrote. */
const MAX_OWNED_BYTES = 64 * 1024 * 1024;

/** The whole text of `path` when it is at most `MAX_OWNED_BYTES`, else undefined. */
function wholeText(path: string, size: number): string | undefined {
  if (size > MAX_OWNED_BYTES) return undefined;
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(size);
    return buf.subarray(0, readSync(fd, buf, 0, size, 0)).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Why `path` may not be written, or undefined: what is there now, if anything, must be a file of `format`. */
function refusal(flag: string, path: string, format: OwnedFormat): string | undefined {
  let stats;
  try {
    stats = lstatSync(path);
  } catch (err) {
    if (isErrnoError(err) && err.code === "ENOENT") return undefined;
    return `${flag} ${path}: ${isErrnoError(err) ? describeErrno(err, path) : String(err)}`;
  }
  if (stats.isSymbolicLink())
    return `${flag} ${path} is a symbolic link; give the real file (outputs never follow links)`;
  if (!stats.isFile()) return `${flag} ${path} exists and is not a regular file`;
  const text = wholeText(path, stats.size);
  if (text === undefined || !format.owns(text))
    return `${flag} ${path} exists and is not ${format.what}; remove it or give another name`;
  return undefined;
}

/** Where an output goes: the file the user named with `flag`, relative to `cwd`. */
export interface OutputTarget {
  /** The flag that named the file (`--html`), for the messages. */
  readonly flag: string;
  readonly file: string;
  readonly cwd: string;
}

/**
 * Writes `text` to the target file, replacing only a file of `format` (one this tool wrote).
 * @throws UsageError for an empty name, a link, a FIFO, a device, a folder, someone else's file, or a failed write
 */
export function writeOutputFile({ flag, file, cwd }: OutputTarget, text: string, format: OwnedFormat): void {
  if (file.trim() === "") throw new UsageError(`${flag} needs a file name`);
  const path = resolve(cwd, file);
  const why = refusal(flag, path, format);
  if (why) throw new UsageError(why);
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    writeFileSync(temp, text, { flag: "wx" });
    renameSync(temp, path);
  } catch (err) {
    rmSync(temp, { force: true });
    throw new UsageError(`${flag} ${path}: ${isErrnoError(err) ? describeErrno(err, path) : String(err)}`);
  }
}
