/**
 * The shape of the planning layers, checked on the source: folders of workloads/ import only sideways or down (never a
 * parent folder's files), no two sibling folders depend on each other through any chain, and the functions of
 * workloads/ and core/cluster/ stay short enough to read at once.
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { filesUnder, repoRoot } from "../helpers/fixtures";

/** Longest function we accept, in lines ("about 40"). */
const MAX_FUNCTION_LINES = 45;

const sources = (dir: string) => filesUnder(dir, /\.ts$/);

/** Relative imports of a file, resolved to repository paths (without extension). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:import|export)[^"';]*?from\s+"(\.[^"]+)"/g)].map((m) => resolve(dirname(file), m[1]!));
}

const workloads = join(repoRoot, "workloads");
const rel = (p: string) => relative(workloads, p).split(sep).join("/");
const isInside = (dir: string, p: string) => p === dir || p.startsWith(`${dir}/`);

/** docs/architecture.md's rooms of workloads/ and what each may import, by room name. */
function documentedRooms(): Map<string, Set<string>> {
  const doc = readFileSync(join(repoRoot, "docs/architecture.md"), "utf8");
  const rows = [...doc.matchAll(/^\| `workloads\/([a-z0-9-]+)\/` \|.*\| ([a-z0-9, -]+) \|$/gm)];
  return new Map(rows.map((m) => [m[1]!, new Set(m[2]!.split(", "))]));
}

describe("structure of workloads/", () => {
  const edges = sources(workloads).flatMap((file) =>
    importsOf(file)
      .filter((t) => isInside(workloads, t))
      .map((target) => ({ from: file, to: target })),
  );

  it("has no upward imports: no file imports from a folder above its own", () => {
    const upward = edges.filter((e) => {
      const [src, dst] = [dirname(e.from), dirname(e.to)];
      return src !== dst && isInside(dst, src);
    });
    expect(upward.map((e) => `${rel(e.from)} -> ${rel(e.to)}`)).toEqual([]);
  });

  it("has each room import only what docs/architecture.md's table of rooms allows", () => {
    const allowed = documentedRooms();
    const roomOf = (file: string) => rel(dirname(file)).split("/")[0]!;
    const outside = (target: string) => relative(repoRoot, target).split(sep)[0]!;
    const rooms = new Set(
      sources(workloads)
        .filter((f) => dirname(f) !== workloads)
        .map(roomOf),
    );
    expect([...rooms].sort()).toEqual([...allowed.keys()].sort());
    const everyImport = sources(workloads).flatMap((file) => importsOf(file).map((to) => ({ from: file, to })));
    const refused = everyImport.flatMap(({ from, to }) => {
      if (dirname(from) === workloads) return [];
      const target = isInside(workloads, to) ? (dirname(to) === workloads ? "(top)" : roomOf(to)) : outside(to);
      const room = roomOf(from);
      return target === room || allowed.get(room)?.has(target) ? [] : [`${rel(from)} -> ${target}`];
    });
    expect(refused).toEqual([]);
  });

  it("has no cycles between sibling folders", () => {
    // The sibling folders that contain each side of an import, under their deepest common folder.
    const folderEdges = new Map<string, Set<string>>();
    for (const e of edges) {
      const [a, b] = [rel(dirname(e.from)).split("/"), rel(dirname(e.to)).split("/")];
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      if (i >= a.length || i >= b.length) continue; // same folder, or an ancestor's files
      const [fa, fb] = [a.slice(0, i + 1).join("/"), b.slice(0, i + 1).join("/")];
      folderEdges.set(fa, (folderEdges.get(fa) ?? new Set()).add(fb));
    }
    const cycles: string[] = [];
    const visit = (node: string, path: string[]): void => {
      if (path.includes(node)) return void cycles.push([...path.slice(path.indexOf(node)), node].join(" -> "));
      for (const next of folderEdges.get(node) ?? []) visit(next, [...path, node]);
    };
    for (const node of folderEdges.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });
});

describe("function length in workloads/ and core/cluster/", () => {
  const files = [...sources(workloads), ...sources(join(repoRoot, "core/cluster"))];

  it(`keeps every function under about 40 lines (at most ${MAX_FUNCTION_LINES})`, () => {
    const long: string[] = [];
    for (const file of files) {
      const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && "body" in node && node.body) {
          const lines =
            src.getLineAndCharacterOfPosition(node.getEnd()).line -
            src.getLineAndCharacterOfPosition(node.getStart()).line +
            1;
          if (lines > MAX_FUNCTION_LINES)
            long.push(
              `${relative(repoRoot, file)}:${src.getLineAndCharacterOfPosition(node.getStart()).line + 1} (${lines} lines)`,
            );
        }
        ts.forEachChild(node, visit);
      };
      visit(src);
    }
    expect(long).toEqual([]);
  });
});
