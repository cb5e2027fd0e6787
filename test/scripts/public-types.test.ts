/**
 * The public API's plain types are generated from the zod schemas (scripts/public-types): the committed files are
 * what the generator writes, and the generator refuses a type that is not exactly its schema's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { checkExact, publicTypeFiles } from "../../scripts/public-types/generate";
import { jsDoc } from "../../scripts/public-types/print";
import { PUBLIC_TYPE_FILES } from "../../scripts/public-types/targets";
import { repoRoot } from "../helpers/fixtures";

describe("the public types, generated from the schemas", () => {
  let generated: Map<string, string>;
  beforeAll(async () => {
    generated = await publicTypeFiles();
  });

  it("are committed as generated (run npm run generate after changing a schema), each exactly its schema's type", () => {
    expect([...generated.keys()]).toEqual(PUBLIC_TYPE_FILES.map((f) => f.path));
    for (const [path, text] of generated) expect(readFileSync(join(repoRoot, path), "utf8"), path).toBe(text);
  });

  it("refuse a type that is not exactly its schema's: a property of another type, a required one made optional", () => {
    const config = generated.get("core/config/types.ts")!;
    for (const [from, to] of [
      ["  kubernetesVersion: string;", "  kubernetesVersion: number;"],
      ["  publicEndpoint: boolean;", "  publicEndpoint?: boolean;"],
    ] as const) {
      expect(config).toContain(from);
      const tampered = new Map(generated).set("core/config/types.ts", config.replace(from, to));
      expect(() => checkExact(tampered), to).toThrow(/ClusterConfig|StackConfig|PlatformConfig/);
    }
  });

  it("keep each property's documentation, defaults included", () => {
    const config = readFileSync(join(repoRoot, "core/config/types.ts"), "utf8");
    expect(config).toMatch(/Kubernetes minor version\.[^]*?@default "1\.36"\s+\*\/\s+kubernetesVersion: string;/);
    expect(config).toMatch(/@default "1\.36"\s+\*\/\s+kubernetesVersion\?: string;/);
    expect(config).not.toMatch(/\bzod\b.*import|from "zod"/);
  });

  it("print a tag that runs over several lines as lines of the block, each behind its asterisk", () => {
    const tag = { name: "default", text: [{ kind: "text", text: "- one line\nand the next" }] };
    expect(jsDoc("About.", [tag])).toBe("/**\n * About.\n * @default - one line\n * and the next\n */\n");
    // Every comment line of the generated files sits behind its asterisk.
    for (const f of PUBLIC_TYPE_FILES) {
      const text = readFileSync(join(repoRoot, f.path), "utf8");
      const blocks = text.match(/\/\*\*[^]*?\*\//g) ?? [];
      for (const line of blocks.flatMap((b) => b.split("\n").slice(1))) expect(line).toMatch(/^\s*\*/);
    }
  });
});
