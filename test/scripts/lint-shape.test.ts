/**
 * The shape rules lint enforces (eslint.config.mjs, scripts/eslint/shape-rules.mjs): functions of at most 60 lines, at
 * most 4 parameters and no import circle, in every folder of the tree; and the one exception, a `describe(...)`
 * callback, which holds tests rather than being read at once.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ESLint, Linter } from "eslint";
import { afterAll, describe, expect, it } from "vitest";
import shape from "../../scripts/eslint/shape-rules.mjs";
import { repoRoot } from "../helpers/fixtures";

const FOLDERS = ["bench", "cli", "components", "core", "io", "policy", "scripts", "stacks", "test", "workloads"];

describe("lint's shape rules", () => {
  const eslint = new ESLint({ cwd: repoRoot });

  it.each(FOLDERS)("apply to every TypeScript file under %s/", async (folder) => {
    const config = (await eslint.calculateConfigForFile(join(repoRoot, folder, "any.ts"))) as Linter.Config;
    expect(config.rules?.["shape/max-lines-per-function"]).toEqual([
      2,
      { max: 60, skipBlankLines: true, skipComments: true },
    ]);
    expect(config.rules?.["max-params"]).toEqual([2, 4]);
    expect(config.rules?.["import-x/no-cycle"]).toEqual([2, expect.objectContaining({ ignoreExternal: true })]);
  });

  const linter = new Linter({ configType: "flat" });
  const lint = (code: string) =>
    linter
      .verify(code, [{ plugins: { shape }, rules: { "shape/max-lines-per-function": ["error", { max: 3 }] } }])
      .map((m) => `${m.line}: ${m.message}`);

  it("count every function but a describe(...) callback, whose tests are counted one by one", () => {
    const body = ["const a = 1;", "const b = 2;", "const c = 3;"].join("\n");
    expect(lint(`describe("s", () => {\n${body}\n});`)).toEqual([]);
    expect(lint(`describe.each([1])("s %d", () => {\n${body}\n});`)).toEqual([]);
    expect(lint(`describe("s", () => {\n  it("t", () => {\n${body}\n  });\n});`)).toEqual([
      "2: Arrow function has too many lines (5). Maximum allowed is 3.",
    ]);
    expect(lint(`function f() {\n${body}\n}`)).toEqual([
      "1: Function 'f' has too many lines (5). Maximum allowed is 3.",
    ]);
    expect(lint(`it("t", () => {\n${body}\n});`)).toHaveLength(1);
  });

  const dir = mkdtempSync(join(repoRoot, "test/scripts/.cycle-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("refuse an import circle, also through a third file", async () => {
    writeFileSync(join(dir, "a.ts"), 'import { b } from "./b";\nexport const a = () => b();\n');
    writeFileSync(join(dir, "b.ts"), 'import { c } from "./c";\nexport const b = () => c();\n');
    writeFileSync(join(dir, "c.ts"), 'import { a } from "./a";\nexport const c = () => a();\n');
    // The planted folder is in the config's ignores (a leftover must not fail `npm run lint`): lint it with them off.
    const results = await new ESLint({ cwd: repoRoot, ignore: false }).lintFiles([join(dir, "a.ts")]);
    expect(results[0]!.messages.map((m) => m.ruleId)).toContain("import-x/no-cycle");
  });
});
