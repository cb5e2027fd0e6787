/**
 * `ray-gpu plan --html`, read as markup (no browser): every bar of a workload is drawn on the scale of its usable-memory
 * line, so no bar of a job that fits crosses the line, and every column of the workloads table has a header.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadWorkloadFile, standaloneStack } from "../../../cli/input/workload-file";
import { planDocument } from "../../../cli/plan/document";
import { planHtml } from "../../../cli/plan/html";
import { planStack } from "../../../workloads/stack";
import { repoRoot, repoStack, runtime } from "../../helpers/fixtures";

type Doc = ReturnType<typeof planDocument>;

const attr = (tag: string, name: string) => Number(new RegExp(`\\s${name}="([^"]+)"`).exec(tag)![1]);

/** One workload's SVG: the x of its usable line, and each bar (part, requirement, headroom) with its ends. */
function bars(html: string, i: number) {
  const svg = new RegExp(`<svg class="workload-budget" id="budget-${i}"[^>]*>(.*?)</svg>`).exec(html)![1]!;
  const lineX = attr(/<line class="usable"[^>]*>/.exec(svg)![0], "x1");
  const rects = [...svg.matchAll(/<rect [^>]*>/g)].map(([tag]) => ({
    part: /data-part="([^"]+)"/.exec(tag)?.[1] ?? "required",
    x: attr(tag, "x"),
    end: attr(tag, "x") + attr(tag, "width"),
    width: attr(tag, "width"),
  }));
  return { lineX, rects };
}

/** The repo's stacks and every example workload file, planned as `plan --html` plans them. */
function docs(): [string, Doc][] {
  const stacks = (["dev", "prod"] as const).map((s): [string, Doc] => [
    s,
    planDocument(s, planStack(repoStack(s), { runtime })),
  ]);
  const dir = join(repoRoot, "examples/workloads");
  const files = readdirSync(dir).map((f): [string, Doc] => {
    const config = standaloneStack(loadWorkloadFile(join(dir, f)), "dev");
    return [f, planDocument(undefined, planStack(config, { runtime, workloadPath: () => "workload" }))];
  });
  return [...stacks, ...files];
}

describe("plan --html bars", () => {
  const all = docs();

  it("draws every bar on its line's scale: a job that fits stays left of the line", () => {
    const checked: string[] = [];
    for (const [source, doc] of all)
      doc.workloads.forEach((w, i) => {
        const { lineX, rects } = bars(planHtml(doc), i);
        const m = w.memory;
        // One scale: pixels per GiB are the same for the line, each part and the requirement (to the 0.1 px rounding).
        const perGiB = (lineX - rects[0]!.x) / m.usableGiB;
        for (const r of rects.filter((b) => b.part !== "headroom")) {
          const gib = r.part === "required" ? m.requiredGiB : m.breakdownGiB[r.part as keyof typeof m.breakdownGiB];
          expect(Math.abs(r.width - gib * perGiB), `${source} ${w.name} ${r.part}`).toBeLessThan(0.2);
        }
        if (!m.fits) return;
        for (const r of rects) expect(r.end, `${source} ${w.name} ${r.part}`).toBeLessThanOrEqual(lineX + 0.1);
        checked.push(`${source} ${w.name}`);
      });
    expect(checked.length).toBeGreaterThanOrEqual(12);
  });

  it("keeps a fitting job whose parts add up past the line inside it (parts are not all held at once)", () => {
    // dev llm-pretrain at one micro-batch per GPU and step: its gradients come after its activations are freed (with
    // accumulation they are held beside them, and the plan sizes the job for both).
    const config = repoStack("dev");
    const workloads = config.workloads.map((w) => (w.name === "llm-pretrain" ? { ...w, globalBatchSize: 8 } : w));
    const doc = planDocument("dev", planStack({ ...config, workloads }, { runtime }));
    const i = doc.workloads.findIndex((w) => w.name === "llm-pretrain");
    expect(doc.workloads[i]).toMatchObject({ microBatchSize: 2, gradientAccumulationSteps: 1 });
    const m = doc.workloads[i]!.memory;
    const parts = ["weights", "gradients", "optimizerStates", "activations", "logits", "framework"] as const;
    expect(m.fits).toBe(true);
    expect(parts.reduce((n, k) => n + m.breakdownGiB[k], 0)).toBeGreaterThan(m.usableGiB);
    const { lineX, rects } = bars(planHtml(doc), i);
    expect(Math.max(...rects.map((r) => r.end))).toBeLessThanOrEqual(lineX + 0.1);
    // Each part from the same zero, on a row of its own.
    expect(new Set(rects.map((r) => r.x)).size).toBe(2); // the parts and the requirement at zero, the headroom after it
  });

  it("gives every column of the workloads table a header: the verdict, then the forecast of one run", () => {
    const html = planHtml(all[0]![1]);
    const table = /<table><tr><th>workload<\/th>(.*?)<\/tr>/.exec(html)![0];
    expect([...table.matchAll(/<th>([^<]*)<\/th>/g)].map((m) => m[1])).toEqual([
      "workload",
      "kind",
      "GPUs",
      "planned per GPU",
      "usable per GPU",
      "verdict",
      "time per run",
      "cost per run",
      "GPU utilization (forecast)",
    ]);
    expect(html).not.toContain("<th></th>");
  });
});
