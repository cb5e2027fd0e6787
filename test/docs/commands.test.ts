/**
 * Every `npx ray-gpu` command the tuning and observability pages show in their `sh` blocks runs as printed, from the
 * repository root, and exits 0 with nothing on standard error: a new command on these pages must run too. Each runs
 * in process (`main`, as `npx ray-gpu` runs it), in a fresh copy of the files the commands read, so `--write`,
 * `--out` and `--html` change the copy, never the repository. An `sh` block of one command followed right away by a
 * `text` block shows that command's output: the block must be exactly what it prints, and the command it names to
 * apply a change (`Apply it with: ray-gpu ...`) runs too. Lines of other commands (kubectl, sed) are not run. A
 * command that needs a live cluster cannot run here: the one allowed is a report from Prometheus at
 * `--prometheus http://localhost:9090`, which runs on the recorded sample (examples/report/) instead, every other flag
 * as printed.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";
import { runMain } from "../helpers/run-main";
import { codeBlocks, type CodeBlock } from "./markdown";

/** The pages whose `npx ray-gpu` commands must run. */
export const COMMAND_PAGES = ["docs/tune.md", "docs/observability.md"] as const;

/** What the commands read, relative to the repository root: copied for each command. */
const COPIED = ["examples", "runtime/e2e/tune-stack", "test/data/run-records"];

/** A live Prometheus behind a port-forward: the one thing a docs command may need that no test has. */
const LIVE_PROMETHEUS = ["--prometheus", "http://localhost:9090"] as const;
/** The recorded report sample a live-Prometheus command runs on instead. */
const RECORDING = "examples/report/prod-llm-pretrain.recording.json";

/** A command shown on a page: where, its words after `npx ray-gpu`, and the output the page shows after it, if any. */
interface ShownCommand {
  readonly where: string;
  readonly line: string;
  readonly argv: readonly string[];
  readonly output?: string;
}

/**
 * A shell line's words, as a POSIX shell splits them: quotes and backslashes taken out, a `#` starting a word begins a
 * comment. Pipes, redirections, expansions and `;` or `&` are refused: the test runs single commands only.
 */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "#" && word === undefined) break;
    else if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      if (end < 0) throw new Error(`unclosed ${c} in: ${line}`);
      if (c === '"' && /[$`\\]/.test(line.slice(i + 1, end))) throw new Error(`expansion in "..." in: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === "\\") word = (word ?? "") + (line[++i] ?? "");
    else if (/[|&;<>()$`*?[~]/.test(c)) throw new Error(`not a single plain command (${c}): ${line}`);
    else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** The block's lines, each continued line (ending in `\`) joined to the next. */
const joinedLines = (body: string) => body.replace(/\\\n/g, " ").split("\n");

/** Whether `next` follows `block` on its page right away, one blank line between. */
const follows = (block: CodeBlock, next: CodeBlock | undefined) =>
  next !== undefined && next.line === block.line + block.body.split("\n").length + 3;

/** Every `npx ray-gpu` command of `page`'s `sh` blocks. */
export function shownCommands(page: string): ShownCommand[] {
  const blocks = codeBlocks(page);
  return blocks.flatMap((block, i) => {
    if (block.info[0] !== "sh") return [];
    const lines = joinedLines(block.body).filter((l) => l.startsWith("npx ray-gpu "));
    const next = blocks[i + 1];
    const output = lines.length === 1 && next?.info[0] === "text" && follows(block, next) ? next.body : undefined;
    const shown = lines.map((line) => ({
      where: `${page}:${block.line}`,
      line: line
        .replace(/\s+#.*$/, "")
        .replace(/\s+/g, " ")
        .trim(),
      argv: shellWords(line).slice(2),
      ...(output === undefined ? {} : { output }),
    }));
    // The command `tune` prints to apply its change runs as printed too (in the copy, where it writes).
    const applies = (output ?? "").split("\n").flatMap((l) => /^Apply it with: (ray-gpu .*)$/.exec(l)?.[1] ?? []);
    return [
      ...shown,
      ...applies.map((line) => ({ where: `${page}:${next!.line}`, line, argv: shellWords(line).slice(1) })),
    ];
  });
}

/**
 * The argv to run: a live-Prometheus command runs on the recording instead, with every other flag as printed (the
 * page's window is the recording's hour, so the recording answers every query it makes).
 */
function runnable(argv: readonly string[]): { argv: string[]; on?: string } {
  const at = argv.findIndex((a, i) => a === LIVE_PROMETHEUS[0] && argv[i + 1] === LIVE_PROMETHEUS[1]);
  if (at < 0) return { argv: [...argv] };
  const rest = [...argv.slice(0, at), ...argv.slice(at + 2)];
  return { argv: [...rest, "--recording", RECORDING], on: `on ${RECORDING} in place of the port-forward` };
}

/** A fresh folder holding the repository's project and stack files and what {@link COPIED} names. */
function repoCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "docs-commands-"));
  for (const f of readdirSync(repoRoot).filter((f) => /^Pulumi(\..+)?\.yaml$/.test(f)))
    cpSync(join(repoRoot, f), join(dir, f));
  for (const path of COPIED) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    cpSync(join(repoRoot, path), join(dir, path), { recursive: true });
  }
  return dir;
}

/**
 * `ray-gpu ...argv` from `dir`, as a shell there runs it: the process's folder is `dir` too, since the CLI reads
 * relative paths (`-C`, `--from`, `--out`) from it (vitest runs each test file in a process of its own: `pool: forks`).
 */
async function runIn(dir: string, argv: readonly string[]) {
  const before = process.cwd();
  process.chdir(dir);
  try {
    return await runMain(argv, dir);
  } finally {
    process.chdir(before);
  }
}

const commands = COMMAND_PAGES.flatMap(shownCommands);
const copies: string[] = [];
afterEach(() => copies.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("the ray-gpu commands the docs show", () => {
  it("are found on every page listed, with the tuning page's worked example, its output and its apply command", () => {
    for (const page of COMMAND_PAGES) expect(commands.map((c) => c.where.split(":")[0])).toContain(page);
    const worked = "-C examples/tune tune --stack tune --from examples/tune/starved-preprocessing.json";
    expect(commands.filter((c) => c.output !== undefined).map((c) => c.line)).toContain(`npx ray-gpu ${worked}`);
    expect(commands.map((c) => c.line)).toContain(`ray-gpu ${worked} --write`);
  });

  it("reads a line as a shell does, and refuses what is not one plain command", () => {
    expect(shellWords(`npx ray-gpu tune -C 'my stack' --from a\\ b.json   # a comment`)).toEqual([
      "npx",
      "ray-gpu",
      "tune",
      "-C",
      "my stack",
      "--from",
      "a b.json",
    ]);
    expect(() => shellWords("npx ray-gpu plan --json | jq .")).toThrow("not a single plain command (|)");
  });

  for (const c of commands) {
    const run = runnable(c.argv);
    it(`${c.where} ${c.line} runs ${run.on ?? "as printed"} and exits 0`, async () => {
      const dir = repoCopy();
      copies.push(dir);
      const r = await runIn(dir, run.argv);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      if (c.output !== undefined) expect(r.out.trimEnd()).toBe(c.output);
    });
  }
});
