/**
 * Reading what a user points the CLI at, safely: a file is read only when it is a regular file (never a folder, a
 * FIFO, a device or a socket, which would fail, block or never end), under a size limit, as UTF-8; a folder given with
 * `-C` must exist. Every problem is a {@link UsageError} naming the path (exit 2), never a stack trace.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, statSync, type Stats } from "node:fs";
import { UsageError } from "../io";

/** Largest input file read, in bytes. A real stack file is a few KiB; 4 MiB leaves room for 10,000 workloads. */
export const MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** What a node's `code` means, in words, for the errors a user can cause or fix. */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: "does not exist",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTDIR: "a part of the path is not a folder",
  EISDIR: "is a folder",
  ELOOP: "too many symbolic links (a link loop?)",
  ENAMETOOLONG: "the name is too long",
  ENOSPC: "no space left on the device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  EEXIST: "already exists",
  ENOTEMPTY: "folder not empty",
  EBUSY: "busy (mounted or in use)",
  EXDEV: "on another file system",
  EMFILE: "too many open files",
  EIO: "input/output error",
};

/** Node's file-system errors carry `code` and `path`. */
export function isErrnoError(err: unknown): err is NodeJS.ErrnoException {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).code === "string";
}

/** `<path>: <what went wrong>` for a file-system error. */
export function describeErrno(err: NodeJS.ErrnoException, path = err.path): string {
  const code = err.code ?? "";
  const words = ERRNO_WORDS[code] ?? err.message;
  return `${path ?? "(unknown path)"}: ${words}${code ? ` (${code})` : ""}`;
}

/** `stat` that reports a missing or unreadable path as a {@link UsageError}. */
function statOrThrow(path: string, what: string): Stats {
  try {
    return statSync(path);
  } catch (err) {
    if (isErrnoError(err)) throw new UsageError(`${what} ${describeErrno(err, path)}`);
    throw err;
  }
}

/** What kind of thing a non-regular path is, for the message. */
function kindOf(stats: Stats): string {
  if (stats.isFile()) return "a file";
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a named pipe (FIFO)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * Reads a regular file as UTF-8, refusing anything else and anything over `maxBytes`.
 * @param what - how the message names the file, e.g. "workload file"
 * @throws UsageError naming the path and the rule
 */
export function readInputFile(path: string, what: string, maxBytes = MAX_INPUT_BYTES): string {
  // Opened without blocking (a FIFO would otherwise wait for a writer), then checked on the open descriptor, so the
  // path cannot be swapped for something else between the check and the read.
  const fd = openOrThrow(path, what);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UsageError(`${what} ${path} is ${kindOf(stats)}, not a file`);
    if (stats.size > maxBytes)
      throw new UsageError(`${what} ${path} is ${stats.size} bytes; the limit is ${maxBytes} bytes (4 MiB)`);
    const bytes = readFileSync(fd);
    if (bytes.length > maxBytes) throw new UsageError(`${what} ${path} grew past the limit of ${maxBytes} bytes`);
    return decodeUtf8(bytes, path, what);
  } catch (err) {
    if (isErrnoError(err)) throw new UsageError(`${what} ${describeErrno(err, path)}`);
    throw err;
  } finally {
    closeSync(fd);
  }
}

/** Opens `path` read-only and non-blocking; a missing or unreadable path is a {@link UsageError}. */
function openOrThrow(path: string, what: string): number {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if (isErrnoError(err)) throw new UsageError(`${what} ${describeErrno(err, path)}`);
    throw err;
  }
}

/** Decodes UTF-8 strictly: a file in another encoding is named, not read as mojibake. */
function decodeUtf8(bytes: Buffer, path: string, what: string): string {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    throw new UsageError(`${what} ${path} is not UTF-8 text; save it as UTF-8`);
  }
}

/**
 * Checks that `dir` (the `-C` folder) exists and is a folder.
 * @throws UsageError naming the path
 */
export function checkInputDir(dir: string): string {
  const stats = statOrThrow(dir, "folder");
  if (!stats.isDirectory()) throw new UsageError(`-C ${dir} is ${kindOf(stats)}, not a folder`);
  return dir;
}
