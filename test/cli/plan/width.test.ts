/** `ray-gpu plan` and `ray-gpu render` print no line over 120 columns, and wrapping changes only line breaks. */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { COLUMNS, columnsOf } from "../../../cli/output/columns";
import { planText, workloadStartup } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { repoRoot, repoStack, runtime } from "../../helpers/fixtures";
import { runMain } from "../../helpers/run-main";

const over = (text: string) => text.split("\n").filter((l) => columnsOf(l) > COLUMNS);
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe("text output width", () => {
  for (const stack of ["dev", "prod"] as const)
    it(`plan --stack ${stack}: every line fits, and the words are those of the unwrapped text`, async () => {
      const r = await runMain(["plan", "--stack", stack]);
      expect(r.code).toBe(0);
      expect(over(r.out)).toEqual([]);
      const config = repoStack(stack);
      const unwrapped = planText(stack, planStack(config, { runtime }), Infinity, workloadStartup(config.workloads));
      expect(over(unwrapped).length).toBeGreaterThan(0);
      expect(words(r.out)).toEqual(words(unwrapped));
    });

  it("docs/reliability.md quotes the prod queue as plan prints it, line for line", () => {
    const doc = readFileSync(join(repoRoot, "docs/reliability.md"), "utf8");
    const quote = /```text\n(Queue ray-gpu[^`]*)```/.exec(doc)![1]!;
    expect(planText("prod", planStack(repoStack("prod"), { runtime }))).toContain(quote);
  });

  it("render --stack dev: every line fits, one file per line", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "ray-gpu-width-")), "out");
    const r = await runMain(["render", "--stack", "dev", "--out", out]);
    expect(r.code).toBe(0);
    expect(over(r.out)).toEqual([]);
    const lines = r.out.trimEnd().split("\n");
    const files = readdirSync(out).filter((f) => f.endsWith(".yaml") || f === "plan.json");
    expect(lines[0]).toBe(`Rendered ${files.length} file(s) to ${out}:`);
    expect(lines.slice(1)).toEqual(files.sort().map((f) => `  ${f}`));
  });
});
