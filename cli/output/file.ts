/**
 * One output file (`plan --html`, `report --html`), written the way `render` writes its folder: never through a
 * link, never into a FIFO, device or folder, never over a file `ray-gpu` did not write, and atomically (a temporary
 * file beside it, renamed over it), so a failed write leaves the old file whole. Every refusal names the path.
 */
import { closeSync, lstatSync, openSync, readSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { describeErrno, isErrnoError } from "../input/file";
import { UsageError } from "../io";

/** The first bytes of `path` (enough to find a generator mark near the top of a page). */
function head(path: string, bytes = 1024): string {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(bytes);
    return buf.subarray(0, readSync(fd, buf, 0, bytes, 0)).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Why `path` may not be written, or undefined: what is there now, if anything, must be a page we wrote. */
function refusal(flag: string, path: string, mark: string): string | undefined {
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
  if (!head(path).includes(mark))
    return `${flag} ${path} exists and was not written by ray-gpu; remove it or give another name`;
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
 * Writes `text` to the target file, replacing only a file that holds `mark`.
 * @throws UsageError for an empty name, a link, a FIFO, a device, a folder, someone else's file, or a failed write
 */
export function writeOutputFile({ flag, file, cwd }: OutputTarget, text: string, mark: string): void {
  if (file.trim() === "") throw new UsageError(`${flag} needs a file name`);
  const path = resolve(cwd, file);
  const why = refusal(flag, path, mark);
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
