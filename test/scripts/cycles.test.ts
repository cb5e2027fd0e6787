/**
 * The circle check of `npm run lint` (dependency-cruiser, .dependency-cruiser.cjs) sees circles ESLint's import-x/no-cycle
 * does not: through `import type` too. Planted circles in a folder of their own (which the repository's run excludes).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cruise, type IConfiguration } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the CommonJS config file dependency-cruiser reads
const config = require(join(repoRoot, ".dependency-cruiser.cjs")) as IConfiguration;

/**
 * The circles dependency-cruiser reports in `files` (each once, by the module it starts from), with the repository's
 * rule and options but its exclusion and its tsconfig (the planted files are outside it); `options` override them.
 */
async function circles(dir: string, files: Record<string, string>, options: object = {}): Promise<string[]> {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const { exclude: _excluded, tsConfig: _tsConfig, ...ours } = config.options!;
  const cruiseOptions = { ...ours, ...options, validate: true, ruleSet: { forbidden: config.forbidden } };
  const result = await cruise([dir], cruiseOptions);
  const output = result.output as { summary: { violations: { rule: { name: string }; from: string }[] } };
  return output.summary.violations.filter((v) => v.rule.name === "no-circular").map((v) => v.from.split("/").pop()!);
}

describe("import circles, type-only imports counted", () => {
  const root = mkdtempSync(join(repoRoot, "test/scripts/.cycle-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("finds a circle made of type-only imports, which ESLint's rule skips", async () => {
    const files = {
      "a.ts": 'import type { B } from "./b";\nexport interface A { b?: B }\n',
      "b.ts": 'import type { A } from "./a";\nexport interface B { a?: A }\n',
    };
    expect(await circles(mkdtempSync(join(root, "types-")), files)).toEqual(["a.ts"]);
    // Without tsPreCompilationDeps the type imports vanish with compilation, as they do for ESLint's rule.
    expect(await circles(mkdtempSync(join(root, "compiled-")), files, { tsPreCompilationDeps: false })).toEqual([]);
  });

  it("finds a value circle through a third file, and none where the imports go one way", async () => {
    const dir = mkdtempSync(join(root, "values-"));
    expect(
      await circles(dir, {
        "a.ts": 'import { b } from "./b";\nexport const a = () => b();\n',
        "b.ts": 'import { c } from "./c";\nexport const b = () => c();\n',
        "c.ts": 'import { a } from "./a";\nexport const c = () => a();\n',
      }),
    ).toEqual(["a.ts"]);
    const line = mkdtempSync(join(root, "line-"));
    expect(
      await circles(line, {
        "a.ts": 'import type { B } from "./b";\nexport type A = B;\n',
        "b.ts": "export type B = number;\n",
      }),
    ).toEqual([]);
  });
});
