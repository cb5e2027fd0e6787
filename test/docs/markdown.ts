/** Reads the README and docs/ pages: fenced blocks, links and headings, for the docs tests. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../helpers/fixtures";

/** A fenced code block: its info string words (`sh runnable` → ["sh", "runnable"]) and body. */
export interface CodeBlock {
  readonly page: string;
  readonly line: number;
  readonly info: readonly string[];
  readonly body: string;
}

/** The README and every page of docs/, relative to the repository root. */
export function pages(): string[] {
  const docs = readdirSync(join(repoRoot, "docs")).filter((f) => f.endsWith(".md"));
  return ["README.md", ...docs.sort().map((f) => `docs/${f}`)];
}

export const readPage = (page: string) => readFileSync(join(repoRoot, page), "utf8");

/** Fenced blocks of a page, in order. */
export function codeBlocks(page: string): CodeBlock[] {
  const lines = readPage(page).split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    blocks.push({ page, line: start + 1, info: open[1]!.trim().split(/\s+/).filter(Boolean), body: body.join("\n") });
  }
  return blocks;
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to dashes. */
export function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

/** Anchors a page defines: heading slugs and explicit `<a id="...">`. */
export function anchors(page: string): Set<string> {
  const text = readPage(page).replace(/```[\s\S]*?```/g, "");
  const out = new Set<string>();
  for (const m of text.matchAll(/^#+ (.+)$/gm)) out.add(slug(m[1]!));
  for (const m of text.matchAll(/<a id="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

/** Relative links of a page (`[text](target)`), outside code blocks. */
export function relativeLinks(page: string): string[] {
  const text = readPage(page).replace(/```[\s\S]*?```/g, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
}

/** Rows of the markdown tables of a page: cells trimmed, header and separator rows dropped. */
export function tableRows(text: string): string[][] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("|") && !/^\|[-| :]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}
