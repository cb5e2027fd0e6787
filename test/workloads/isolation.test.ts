/**
 * A change to one job never touches another: every other workload's objects stay byte-identical, so `pulumi up`
 * replaces (restarts) only the job whose spec changed and leaves the others running.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseStackConfig } from "../../core/config/stack";
import { stableYaml } from "../../core/serialize";
import { planStack, type StackPlan } from "../../workloads/stack";
import { repoStack, runtime } from "../helpers/fixtures";

const base = repoStack("prod");
const render = (plan: StackPlan) =>
  new Map(plan.objects.map((o) => [o.workload, o.objects.map((x) => stableYaml(x)).join("---\n")]));
const before = render(planStack(base, { runtime, requireRender: true }));

/** Edits a job could get in a pull request, each still a valid stack. */
const edits: readonly ((w: Record<string, unknown>) => void)[] = [
  (w) => (w["env"] = { ...(w["env"] as object), EXTRA: "1" }),
  (w) => (w["maxRuntimeMinutes"] = 333),
  (w) => (w["entrypoint"] = `${String(w["entrypoint"])} --changed`),
  (w) => (w["image"] = "example/other:2"),
];

describe("one job's change leaves every other job's objects as they were", () => {
  it("holds for every workload and edit of the prod stack", () => {
    fc.assert(
      fc.property(fc.nat({ max: base.workloads.length - 1 }), fc.nat({ max: edits.length - 1 }), (i, e) => {
        const raw = structuredClone(base) as unknown as { workloads: Record<string, unknown>[] };
        edits[e]!(raw.workloads[i]!);
        const after = render(planStack(parseStackConfig(raw), { runtime, requireRender: true }));
        const changed = base.workloads[i]!.name;
        expect(after.get(changed)).not.toBe(before.get(changed));
        for (const [name, text] of before) if (name !== changed) expect(after.get(name), name).toBe(text);
      }),
      { seed: 7, numRuns: 24 },
    );
  });
});
