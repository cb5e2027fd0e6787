/** YAML input: duplicate keys and nesting found in one linear pass, aliases capped but not forbidden. */
import { describe, expect, it } from "vitest";
import { parseDocument, visit, type Alias } from "yaml";
import { aliasTargets, MAX_ALIAS_EXPANSIONS, MAX_NESTING, parseYamlText } from "../../../cli/input/yaml";
import { ConfigError } from "../../../core/errors";

const problems = (text: string) => {
  try {
    parseYamlText(text, "f.yaml");
  } catch (e) {
    if (e instanceof ConfigError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  return [];
};

describe("YAML input", () => {
  it("names each duplicate key with its line, in any mapping", () => {
    expect(problems("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n")).toEqual([
      'f.yaml:5: key "a" is given twice in the same mapping; keep one',
      'f.yaml:4: key "c" is given twice in the same mapping; keep one',
    ]);
  });

  it("shows a syntax error at its line and column with the lines it is in and a caret, never a dangling colon", () => {
    expect(problems("config:\n  a: b\n  c: : d\n")).toEqual([
      "f.yaml:3:6: Nested mappings are not allowed in compact mappings\n      c: : d\n         ^",
    ]);
  });

  it("keeps legitimate aliases working: 500 uses of one anchor", () => {
    const text = ["base: &b {x: 1}", ...Array.from({ length: 500 }, (_, i) => `k${i}: *b`)].join("\n");
    expect((parseYamlText(text, "f.yaml") as Record<string, unknown>)["k499"]).toEqual({ x: 1 });
  });

  it("refuses an alias used inside its own anchor, in every shape, with its line (it crashed with exit 70)", () => {
    for (const [text, line] of [
      ["env: &e {A: *e}\n", 1],
      ["- &w [*w]\n", 1],
      ["a: &a\n  b:\n    - c: *a\n", 3],
      ["a: &a\n  <<: *a\n", 2],
      ["x: &x [1, [2, {y: *x}]]\n", 1],
    ] as const) {
      const found = problems(text);
      expect(found, text).toHaveLength(1);
      expect(found[0], text).toMatch(
        new RegExp(`^f\\.yaml:${line}: alias \\*\\w+ is used inside the value its anchor`),
      );
    }
  });

  it("property: any value an accepted document parses to is a tree (no value contains itself), 300 alias shapes", () => {
    const shapes = ["{k: *a}", "[*a]", "{k: [*a, 1]}", "[{k: *a}]", "{<<: *a}"];
    for (let i = 0; i < 300; i++) {
      const depth = i % 4;
      let inner = shapes[i % shapes.length]!;
      for (let d = 0; d < depth; d++) inner = d % 2 ? `[${inner}]` : `{n${d}: ${inner}}`;
      const text = i % 3 === 0 ? `b: &a {v: 1}\nc: ${inner}\n` : `root: &a ${inner}\n`;
      const found = problems(text);
      if (found.length === 0) expect(() => JSON.stringify(parseYamlText(text, "f.yaml")), text).not.toThrow();
      else expect(found[0], text).toContain("is used inside the value its anchor");
    }
  });

  it("finds each alias's node in one pass exactly as the parser's own resolve does, anchors redefined and nested", () => {
    const texts = [
      "a: &x 1\nb: *x\nc: &x [2, &y {k: *x}]\nd: *x\ne: *y\nf: &y 3\ng: *y\nh: *z\n",
      "- &a {b: &b [1], c: *b}\n- *a\n- &b x\n- *b\n- {<<: *a, d: *b}\n",
      ["base: &b {x: 1}", ...Array.from({ length: 60 }, (_, i) => `k${i}: ${i % 7 ? "*b" : `&b {x: ${i}}`}`)].join(
        "\n",
      ),
    ];
    for (const text of texts) {
      const doc = parseDocument(text, { merge: true, uniqueKeys: false });
      const targets = aliasTargets(doc);
      const aliases: Alias[] = [];
      visit(doc, { Alias: (_, a) => void aliases.push(a) });
      expect(targets.size, text).toBe(aliases.length);
      for (const a of aliases) expect(targets.get(a), `${text}: *${a.source}`).toBe(a.resolve(doc));
    }
  });

  it("merges merge keys as Pulumi does", () => {
    expect(parseYamlText("base: &b {kind: A, gpus: 4}\nw: {<<: *b, gpus: 8}\n", "f.yaml")).toEqual({
      base: { kind: "A", gpus: 4 },
      w: { kind: "A", gpus: 8 },
    });
  });

  it("stops an alias bomb with a clear message", () => {
    const rows = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 6; i++)
      rows.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(", ")}]`,
      );
    expect(problems(rows.join("\n"))).toEqual([
      `f.yaml: aliases expand to more than ${MAX_ALIAS_EXPANSIONS} nodes (an alias bomb?); write the values out or use fewer aliases`,
    ]);
  });

  it("refuses nesting deeper than the limit, whether the parser copes with it or not", () => {
    const deep = (n: number) => `a: ${"[".repeat(n)}${"]".repeat(n)}\n`;
    expect(problems(deep(MAX_NESTING - 2))).toEqual([]);
    expect(problems(deep(MAX_NESTING + 5))).toEqual([`f.yaml:1: nested more than ${MAX_NESTING} levels deep`]);
    expect(problems(deep(20_000))[0]).toMatch(/nested too deeply to parse|nested more than/);
  });

  it("parses 20,000 keys (the pairwise duplicate check took 4.9 s for 16,000; timing lives in bench/)", () => {
    const text = Array.from({ length: 20_000 }, (_, i) => `k${i}: ${i}`).join("\n");
    expect(Object.keys(parseYamlText(text, "f.yaml") as object)).toHaveLength(20_000);
  });
});
