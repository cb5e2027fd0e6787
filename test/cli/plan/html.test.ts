/**
 * `ray-gpu plan --html` in headless Chromium (Debian's package, driven by playwright-core): the page loads without
 * console errors, every number it shows equals `plan --json`'s, and each workload gets its memory budget bars.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../../cli/main";
import { repoRoot } from "../../helpers/fixtures";
import { findTool, missingReason, openPage } from "../../helpers/tools";

const chromium = findTool("chromium", "CHROMIUM");
const skip = missingReason("chromium", chromium, "apt-get install chromium");

describe.skipIf(skip)("ray-gpu plan --html", () => {
  it("draws each workload's memory budget and each pool, with the JSON's numbers, and loads cleanly", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ray-gpu-plan-"));
    const html = join(dir, "plan.html");
    let out = "";
    const code = await main(["plan", "--stack", "prod", "--json", "--html", html], {
      out: (s) => (out += s),
      err: () => undefined,
      cwd: repoRoot,
    });
    expect(code).toBe(0);
    const doc = JSON.parse(out) as Record<string, unknown> & { workloads: { memory: { breakdownGiB: object } }[] };
    const shot = process.env["RAY_GPU_SCREENSHOTS"]
      ? join(process.env["RAY_GPU_SCREENSHOTS"], "plan.png")
      : join(dir, "plan.png");
    const page = await openPage(chromium!, html, shot);
    expect(page.errors).toEqual([]);
    const lookup = (key: string) => key.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc);
    expect(page.shown.length).toBeGreaterThan(doc.workloads.length * 3);
    for (const [key, text] of page.shown) expect(text, key).toBe(String(lookup(key)));
    // every non-zero part of every workload, plus the headroom of those that fit
    const parts = doc.workloads.reduce(
      (n, w) =>
        n +
        [
          "weights",
          "gradients",
          "optimizerStates",
          "activations",
          "logits",
          "kvCache",
          "communicationBuffers",
          "framework",
        ].filter((k) => (w.memory.breakdownGiB as Record<string, number>)[k]! > 0).length +
        1,
      0,
    );
    expect(page.bars).toBe(parts);
    expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
  });
});
