/**
 * The TypeScript snippets of the README and docs/, as a consumer pastes them: each ```ts block is a program of its
 * own, compiled with a `pulumi new typescript` tsconfig against the packed package and run under Pulumi's standard
 * mocks (consumers.test.ts). A block marked ```ts fragment is compiled only: it must still compile as pasted (every
 * name it uses declared or imported), but it is a part of a program, not one to run.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codeBlocks, pages } from "../docs/markdown";
import { repoRoot } from "../helpers/fixtures";

/** A snippet written into a consumer project: its file there, where it comes from, whether it runs. */
export interface Snippet {
  /** File name in the project, e.g. `docs-library-L47.ts`. */
  readonly file: string;
  /** `docs/library.md:47`. */
  readonly source: string;
  /** False for a block marked `fragment`: compiled, not run. */
  readonly complete: boolean;
}

/** Every ```ts (or ```typescript) block of the README and docs/ pages. */
export function docSnippets(): (Snippet & { readonly body: string })[] {
  return pages().flatMap((page) =>
    codeBlocks(page)
      .filter((b) => b.info[0] === "ts" || b.info[0] === "typescript")
      .map((b) => ({
        file: `${page.replace(/\.md$/, "").replace(/[^A-Za-z0-9]+/g, "-")}-L${b.line}.ts`,
        source: `${b.page}:${b.line}`,
        complete: !b.info.includes("fragment"),
        body: b.body,
      })),
  );
}

/**
 * Writes the snippets into `dir` with the template's tsconfig (its compiler options as they are, the snippets as
 * its files), so one `tsc -p .` compiles them all, each as its own module.
 */
export function writeSnippetProject(dir: string, template: string): Snippet[] {
  const snippets = docSnippets();
  for (const s of snippets) writeFileSync(join(dir, s.file), `${s.body}\n`);
  const tsconfig = JSON.parse(
    readFileSync(join(repoRoot, "test/package/tsconfigs", `${template}.json`), "utf8"),
  ) as Record<string, unknown>;
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ ...tsconfig, files: snippets.map((s) => s.file) }));
  return snippets.map(({ file, source, complete }) => ({ file, source, complete }));
}
