/**
 * The library page shows the consumer tests' programs as they are, and the API reference in docs/api/ is what TypeDoc
 * generates from the public entry point, with every export documented (TypeDoc treats a missing comment as an error).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";
import { codeBlocks } from "./markdown";

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) walk(full);
      else out[relative(dir, full)] = readFileSync(full, "utf8");
    }
  };
  walk(dir);
  return out;
}

describe("library docs", () => {
  it("shows the consumer tests' programs verbatim", () => {
    const blocks = codeBlocks("docs/library.md")
      .filter((b) => b.info[0] === "ts")
      .map((b) => `${b.body}\n`);
    for (const file of ["platform.ts", "job.ts"]) {
      expect(blocks, file).toContain(readFileSync(join(repoRoot, "test/package/consumer", file), "utf8"));
    }
  });

  it("has the API reference TypeDoc generates, every export documented (npm run docs:api to refresh)", async () => {
    const out = mkdtempSync(join(tmpdir(), "ray-gpu-api-"));
    await promisify(execFile)(process.execPath, [join(repoRoot, "node_modules/typedoc/bin/typedoc"), "--out", out], {
      cwd: repoRoot,
    });
    expect(tree(join(repoRoot, "docs/api"))).toEqual(tree(out));
  });
});
