/** The one wrapping of the CLI's text output: at spaces, with a hanging indent, never inside a token that could fit. */
import { describe, expect, it } from "vitest";
import { COLUMNS, columnsOf, wrapped } from "../../../cli/output/columns";

const words = (lines: readonly string[]) => lines.join(" ").split(/\s+/).filter(Boolean);

describe("wrapped", () => {
  it("keeps a line that fits as it is", () => {
    expect(wrapped("short line", "  ")).toEqual(["  short line"]);
  });

  it("breaks at spaces into lines of at most the width, later lines hanging 2 deeper, the words unchanged", () => {
    const text = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const lines = wrapped(text, "  ", undefined, 40);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.every((l) => columnsOf(l) <= 40)).toBe(true);
    expect(lines[0]!.startsWith("  word0")).toBe(true);
    expect(lines.slice(1).every((l) => /^ {4}\S/.test(l))).toBe(true);
    expect(words(lines)).toEqual(text.split(" "));
  });

  it("puts a token longer than the width alone on its line, whole", () => {
    const path = `/${"very-long-folder/".repeat(10)}file.yaml`;
    const lines = wrapped(`see ${path} now`, "", "  ", 60);
    expect(lines).toEqual(["see", `  ${path}`, "  now"]);
  });

  it("keeps a <placeholder>, a `code span`, a [note] and a number with its unit on one line", () => {
    const cases = [
      "Values=<the stack's vpcId output>,",
      "`pulumi state unprotect`",
      "[example: not submitted]",
      "17.5 GiB",
    ];
    for (const token of cases)
      for (let pad = 1; pad < 40; pad++) {
        const lines = wrapped(`${"x".repeat(pad)} ${token} tail`, "", "  ", 40);
        expect(lines.some((l) => l.includes(token))).toBe(true);
      }
  });

  it("wraps at 120 columns unless told", () => {
    const lines = wrapped("word ".repeat(100).trim());
    expect(COLUMNS).toBe(120);
    expect(Math.max(...lines.map(columnsOf))).toBeLessThanOrEqual(120);
    expect(columnsOf(lines[0]!)).toBeGreaterThan(110);
  });
});
