/**
 * Which files of a render folder are provably a render's own. The manifest a render leaves (`.ray-gpu-render.json`)
 * records the SHA-256 of every file it wrote; a file counts as ours only when it is a regular file (not a link, not a
 * folder) whose content still has the recorded hash. Everything else is foreign and is never deleted or overwritten:
 * a file the user changed or added, a subfolder (render writes none: a Pulumi project, `.git`, `stacks/`), a link, and
 * every file a planted manifest lists without a hash that matches. A manifest of an older render (a list of names, no
 * hashes) vouches only for files that are, by their content, a render's own: a Kubernetes object labelled
 * `app.kubernetes.io/managed-by: pulumi-ray-gpu` in the file named after its kind and name, or a plan document.
 */
import { createHash } from "node:crypto";
import { closeSync, lstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { MANAGED_BY } from "../../workloads/k8s/labels";
import { stableJson } from "../../core/serialize";

/** The manifest a render leaves in its folder: the files it wrote, each with its SHA-256. */
export const RENDER_MANIFEST = ".ray-gpu-render.json";

/**
 * Larger files are never ours, and are not read to be hashed. A render's objects are a few KiB, but its plan.json grows
 * with the stack, about 10 KiB per workload: 50 MiB at 5,000 workloads (a limit of 16 MiB once made every re-render of
 * such a stack refuse its own plan.json). Files are hashed in pieces, never held whole.
 */
const MAX_OWN_FILE_BYTES = 2 ** 30;
/** A file an older manifest lists is judged by its content, parsed whole: only up to this size. */
const MAX_PARSED_FILE_BYTES = 16 * 2 ** 20;
/** The manifest is parsed whole: about 90 bytes per file, 30 MiB for the most workloads a 4 MiB stack file holds. */
const MAX_MANIFEST_BYTES = 2 ** 28;
/** Files up to this size are read whole to be hashed; larger ones in pieces of this size. */
const HASH_PIECE_BYTES = 2 ** 20;

/** File name of a rendered object: `<kind>-<name>.yaml`, lowercase. */
export function objectFileName(kind: string, name: string): string {
  return `${kind.toLowerCase()}-${name}.yaml`;
}

/** SHA-256 of a text or a file's bytes, hex. */
export const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");

/** The manifest's text for the files of one render (the manifest itself not among them), given each file's SHA-256. */
export function manifestText(stack: string, sums: ReadonlyMap<string, string>): string {
  return stableJson({ renderedBy: "ray-gpu render", stack, sha256: Object.fromEntries(sums) });
}

/** What a render folder holds: the files provably ours, the foreign entries, and whether its manifest is one of ours. */
export interface FolderInventory {
  /** Regular files whose content matches the manifest's hash: replaced by the next render. */
  readonly ours: readonly string[];
  /** Everything else, the manifest included when it is not one of ours: kept, never deleted or overwritten. */
  readonly foreign: readonly string[];
  /** The folder's manifest is ours (replaced with the render); false when it is missing, foreign or older. */
  readonly ownManifest: boolean;
  /** The manifest is a render's from before checksums were recorded (its files were judged by their content). */
  readonly olderManifest: boolean;
  /**
   * Own files proved by their checksum that no other name shares (one hard link), by name, with that checksum: the
   * next render links such a file into its own folder when it would write the same bytes, instead of writing them.
   */
  readonly reusable: ReadonlyMap<string, string>;
}

/** What a manifest vouches for: each file's checksum, or (an older manifest) the names it lists. */
interface Manifest {
  readonly sums: ReadonlyMap<string, string>;
  readonly older: boolean;
  readonly listed: ReadonlySet<string>;
}

/** The manifest's checksums by file name; `undefined` when it is not a regular file holding a manifest of ours. */
function manifestSums(dir: string): Manifest | undefined {
  const path = join(dir, RENDER_MANIFEST);
  try {
    const stats = lstatSync(path);
    if (!stats.isFile() || stats.size > MAX_MANIFEST_BYTES) return undefined;
    const doc = JSON.parse(readFileSync(path, "utf8")) as { renderedBy?: unknown; sha256?: unknown; files?: unknown };
    if (doc.renderedBy !== "ray-gpu render") return undefined;
    if (Array.isArray(doc.files) && doc.sha256 === undefined) {
      const listed = doc.files.filter((f): f is string => typeof f === "string");
      return { sums: new Map(), older: true, listed: new Set(listed) };
    }
    if (typeof doc.sha256 !== "object" || doc.sha256 === null) return undefined;
    const sums = Object.entries(doc.sha256).filter((e): e is [string, string] => typeof e[1] === "string");
    return { sums: new Map(sums), older: false, listed: new Set() };
  } catch {
    return undefined;
  }
}

/** SHA-256 of a file of `size` bytes: read whole when small, else in pieces. */
function fileSha256(path: string, size: number): string {
  if (size <= HASH_PIECE_BYTES) return sha256(readFileSync(path));
  const hash = createHash("sha256");
  const piece = Buffer.allocUnsafe(HASH_PIECE_BYTES);
  const fd = openSync(path, "r");
  try {
    for (let n = readSync(fd, piece); n > 0; n = readSync(fd, piece)) hash.update(piece.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest("hex");
}

/** The entry `name` of `dir` when it is a regular file small enough to be a render's: its path, size and link count. */
function ownSizedFile(dir: string, name: string): { path: string; size: number; links: number } | undefined {
  const path = join(dir, name);
  const stats = lstatSync(path);
  if (!stats.isFile() || stats.size > MAX_OWN_FILE_BYTES) return undefined;
  return { path, size: stats.size, links: stats.nlink };
}

/** Whether a file an older manifest lists is, by its content, a render's: an object of ours, or a plan document. */
function renderedByContent(name: string, bytes: Buffer): boolean {
  try {
    const doc = parse(bytes.toString("utf8")) as Record<string, unknown> | null;
    if (name === "plan.json") return doc !== null && ["stack", "pools", "workloads"].every((k) => k in doc);
    const meta = doc?.["metadata"] as { name?: unknown; labels?: Record<string, unknown> } | undefined;
    const label = meta?.labels?.["app.kubernetes.io/managed-by"];
    const fileName = objectFileName(String(doc?.["kind"]), String(meta?.name));
    return label === MANAGED_BY["app.kubernetes.io/managed-by"] && fileName === name;
  } catch {
    return false;
  }
}

/** How an entry of a render folder was judged: foreign, ours by content (older manifest), or ours by checksum. */
type Judged = { readonly own: false } | { readonly own: true; readonly sum?: string; readonly links: number };
const NOT_OWN: Judged = { own: false };

/** Whether the entry `name` of `dir` is provably a render's own, by its checksum (or, older manifest, its content). */
function judge(dir: string, name: string, manifest: Manifest | undefined): Judged {
  const sum = manifest?.sums.get(name);
  if (!manifest || (sum === undefined && !manifest.listed.has(name))) return NOT_OWN;
  const file = ownSizedFile(dir, name);
  if (file === undefined) return NOT_OWN;
  if (sum !== undefined)
    return fileSha256(file.path, file.size) === sum ? { own: true, sum, links: file.links } : NOT_OWN;
  if (file.size > MAX_PARSED_FILE_BYTES) return NOT_OWN;
  return renderedByContent(name, readFileSync(file.path)) ? { own: true, links: file.links } : NOT_OWN;
}

/** Sorts the entries of an existing render folder into ours and foreign. */
export function inventory(dir: string): FolderInventory {
  const manifest = manifestSums(dir);
  const ours: string[] = [];
  const foreign: string[] = [];
  const reusable = new Map<string, string>();
  for (const name of readdirSync(dir).sort()) {
    if (name === RENDER_MANIFEST) {
      if (!manifest) foreign.push(name);
      continue;
    }
    const judged = judge(dir, name, manifest);
    if (!judged.own) {
      foreign.push(name);
      continue;
    }
    ours.push(name);
    if (judged.sum !== undefined && judged.links === 1) reusable.set(name, judged.sum);
  }
  const older = manifest?.older ?? false;
  return { ours, foreign, ownManifest: manifest !== undefined, olderManifest: older, reusable };
}
