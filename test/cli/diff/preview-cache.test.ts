/**
 * `RAY_GPU_PREVIEW_CACHE` (cli/diff/preview-child.ts): a preview that succeeded is kept, keyed by the build, the stack
 * file and Pulumi.yaml, and read back instead of running the program again; a changed stack file gets its own entry.
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { diff, gpuPools, prod, repo } from "./fixture";

const suiteCache = process.env["RAY_GPU_PREVIEW_CACHE"];
afterEach(() => {
  process.env["RAY_GPU_PREVIEW_CACHE"] = suiteCache;
});

/** A cache folder of this test's own, set for the diffs it runs. */
function ownCache(): string {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-preview-cache-test-"));
  process.env["RAY_GPU_PREVIEW_CACHE"] = dir;
  return dir;
}

const kept = (cache: string) => readdirSync(cache).filter((f) => f.endsWith(".json"));

describe("the preview cache", () => {
  it("is set for every test file by the test setup (test/global-setup.ts)", () => {
    expect(suiteCache).toMatch(/ray-gpu-preview-cache-/);
  });

  it("keeps one preview per side, reads it back on the next diff, and a changed stack file gets its own", async () => {
    const cache = ownCache();
    const head = prod();
    gpuPools(head)[1]!["maxNodes"] = 12;
    const dir = repo(prod(), head);
    const first = await diff(dir);
    expect(first.code).toBe(0);
    expect(first.out).toContain("updated NodeGroup ray-gpu-infer-a10g-1x-ng");
    expect(kept(cache)).toHaveLength(2);

    // Read back: the same output, no new entry. What is read is the kept entry: emptied, both sides have nothing.
    expect((await diff(dir)).out).toBe(first.out);
    expect(kept(cache)).toHaveLength(2);
    for (const f of kept(cache)) writeFileSync(join(cache, f), "[]");
    expect((await diff(dir)).out).toContain("platform resources: no change");

    gpuPools(head)[1]!["maxNodes"] = 13;
    writeFileSync(join(dir, "Pulumi.prod.yaml"), JSON.stringify(head));
    await diff(dir);
    expect(kept(cache)).toHaveLength(3);
  });
});
