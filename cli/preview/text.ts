/**
 * The text of `ray-gpu preview`: the resources as a tree under their parents, as `pulumi preview` prints them
 * (short type tokens, each child indented under its component), fitted to {@link PREVIEW_COLUMNS} columns; `--wide`
 * gives the flat table with full type tokens and parents instead.
 */
import { byCodePoint } from "../../core/serialize";
import type { StackPlan } from "../../workloads/stack";
import { COLUMNS } from "../output/columns";
import { deployLines } from "../plan/text";
import type { PreviewResource } from "./run";

/** The width the default view fits: the CLI's text width. */
export const PREVIEW_COLUMNS = COLUMNS;

/**
 * A type token as Pulumi prints it in a preview: `aws:eks/nodeGroup:NodeGroup` → `aws:eks:NodeGroup` (the module's
 * last part repeats the name); tokens whose module is a path of its own (`kubernetes:ray.io/v1:RayJob`) stay whole.
 */
export function shortType(type: string): string {
  const [pkg, module, name] = type.split(":");
  if (pkg === undefined || module === undefined || name === undefined) return type;
  const slash = module.lastIndexOf("/");
  if (slash < 0 || module.slice(slash + 1).toLowerCase() !== name.toLowerCase()) return type;
  return `${pkg}:${module.slice(0, slash)}:${name}`;
}

/** What a resource's name column says besides the name: its protection, and whether a change restarts a job. */
function marks(r: PreviewResource): string {
  const notes: string[] = [...(r.protection ?? [])];
  if (r.type.endsWith("RayJob") && r.replaceOnChanges) notes.push("a spec change restarts this job");
  return notes.length ? ` (${notes.join(", ")})` : "";
}

/** A closing note on RayJobs: what a change to one does, and what it leaves alone. */
function rayJobNote(doc: { resources: readonly PreviewResource[] }): string[] {
  const jobs = doc.resources.filter((r) => r.type.endsWith("RayJob")).length;
  if (jobs === 0) return [];
  return [
    `RayJobs (${jobs}): a change to one job's spec deletes that job (a running one stops) and submits it again;`,
    "training resumes from its last checkpoint, and its data position if the batch size and worker count are",
    "unchanged. Other jobs are left running: each job's objects depend only on its own spec (and the runtime",
    "package, which changes only with pulumi-ray-gpu's version). This list cannot tell which job a change touches:",
    "`ray-gpu render` before and after, or `pulumi preview` against the cluster, shows that.",
    "",
  ];
}

/** One row of the tree: the type column (indent and short type) and the name column. */
interface TreeRow {
  readonly type: string;
  readonly name: string;
  /** The parent's name, shown as `…` where the child's name starts with it. */
  readonly parent: string | null;
}

/** The component each parent name stands for: a `ray-gpu:` component where names are shared, else the first. */
function parentsByName(resources: readonly PreviewResource[]): Map<string, PreviewResource> {
  const out = new Map<string, PreviewResource>();
  for (const r of resources) {
    const held = out.get(r.name);
    if (!held || (!held.type.startsWith("ray-gpu:") && r.type.startsWith("ray-gpu:"))) out.set(r.name, r);
  }
  return out;
}

/** Depth-first rows: each resource under its parent, siblings by type then name (code point). */
function treeRows(resources: readonly PreviewResource[]): TreeRow[] {
  const byName = parentsByName(resources);
  const children = new Map<PreviewResource | null, PreviewResource[]>();
  for (const r of resources) {
    const parent = r.parent === null ? null : (byName.get(r.parent) ?? null);
    const key = parent === r ? null : parent;
    children.set(key, [...(children.get(key) ?? []), r]);
  }
  const rows: TreeRow[] = [];
  const walk = (node: PreviewResource | null, indent: string) => {
    const kids = [...(children.get(node) ?? [])].sort(
      (a, b) => byCodePoint(a.type, b.type) || byCodePoint(a.name, b.name),
    );
    kids.forEach((r, i) => {
      const last = i === kids.length - 1;
      const branch = node === null ? "" : last ? "└─ " : "├─ ";
      rows.push({ type: `${indent}${branch}${shortType(r.type)}`, name: `${r.name}${marks(r)}`, parent: r.parent });
      if (children.has(r)) walk(r, node === null ? "" : `${indent}${last ? "   " : "│  "}`);
    });
  };
  walk(null, "");
  return rows;
}

/** The name cut to `width`: first its parent's name prefix becomes `…`, then its middle. */
function fitName(row: TreeRow, width: number): string {
  let name = row.name;
  if (name.length > width && row.parent && name.startsWith(`${row.parent}-`))
    name = `…${name.slice(row.parent.length)}`;
  if (name.length <= width) return name;
  const keep = Math.max(width - 1, 2);
  return `${name.slice(0, Math.ceil(keep / 2))}…${name.slice(name.length - Math.floor(keep / 2))}`;
}

const header = (stack: string, doc: { resources: readonly PreviewResource[] }) => [
  `Preview of stack ${stack}: ${doc.resources.length} resources (offline, Pulumi mock runtime;`,
  "<computed: …> marks values the cloud assigns)",
  "",
];

/** What a preview shows: the resources and, for a stack's preview, what its plan says of the deploy and destroy. */
export interface PreviewDocument {
  readonly resources: readonly PreviewResource[];
  readonly deploy?: Pick<StackPlan, "apiEndpoint" | "destroy">;
}

/** The tree, every line at most {@link PREVIEW_COLUMNS} columns. */
export function previewText(stack: string, doc: PreviewDocument): string {
  const rows = treeRows(doc.resources);
  const typeWidth = Math.max("TYPE".length, ...rows.map((r) => r.type.length));
  const nameWidth = PREVIEW_COLUMNS - typeWidth - 2;
  const line = (type: string, name: string) => `${type.padEnd(typeWidth)}  ${name}`.trimEnd();
  return [
    ...header(stack, doc),
    line("TYPE", "NAME"),
    ...rows.map((r) => line(r.type, fitName(r, nameWidth))),
    "",
    ...rayJobNote(doc),
    ...(doc.deploy ? deployLines(doc.deploy) : []),
  ].join("\n");
}

/** `--wide`: one line per resource with its full type token, whole name and parent. */
export function previewWideText(stack: string, doc: PreviewDocument): string {
  const rows = doc.resources.map((r) => [r.type, `${r.name}${marks(r)}`, r.parent ?? "-"]);
  const widths = [0, 1, 2].map((i) => Math.max(...[["TYPE", "NAME", "PARENT"], ...rows].map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [
    ...header(stack, doc),
    line(["TYPE", "NAME", "PARENT"]),
    ...rows.map(line),
    "",
    ...rayJobNote(doc),
    ...(doc.deploy ? deployLines(doc.deploy) : []),
  ].join("\n");
}
