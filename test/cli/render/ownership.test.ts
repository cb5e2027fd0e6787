/** Which files of a render folder are a render's own: proved by checksum, whatever their size up to the limit. */
import { linkSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { inventory, manifestText, RENDER_MANIFEST, sha256 } from "../../../cli/render/ownership";

const folder = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-ownership-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const sums = new Map(Object.entries(files).map(([name, text]) => [name, sha256(text)]));
  writeFileSync(join(dir, RENDER_MANIFEST), manifestText("prod", sums));
  return dir;
};

describe("render folder inventory", () => {
  it("owns a plan.json larger than 16 MiB (a stack of a few thousand workloads), hashed in pieces", () => {
    const big = `{"workloads": "${"x".repeat(17 * 2 ** 20)}"}\n`;
    const dir = folder({ "plan.json": big, "rayjob-a.yaml": "kind: RayJob\n" });
    const inv = inventory(dir);
    expect(inv.ours).toEqual(["plan.json", "rayjob-a.yaml"]);
    expect(inv.foreign).toEqual([]);
    expect(inv.reusable.get("plan.json")).toBe(sha256(big));
  });

  it("a file changed by one byte past the first piece is foreign; one with a second link is ours, not reusable", () => {
    const big = "y".repeat(3 * 2 ** 20);
    const dir = folder({ "plan.json": big, "rayjob-a.yaml": "kind: RayJob\n" });
    writeFileSync(join(dir, "plan.json"), `${big.slice(0, -1)}z`);
    linkSync(join(dir, "rayjob-a.yaml"), join(mkdtempSync(join(tmpdir(), "ray-gpu-elsewhere-")), "copy.yaml"));
    const inv = inventory(dir);
    expect(inv.foreign).toEqual(["plan.json"]);
    expect(inv.ours).toEqual(["rayjob-a.yaml"]);
    expect(inv.reusable.size).toBe(0);
  });
});
