/** plan's queue section says when the jobs that would wait are [example] entries, which pulumi up never submits. */
import { describe, expect, it } from "vitest";
import { planText } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { repoStack, runtime } from "../../helpers/fixtures";

const queueNote = (text: string) =>
  text
    .split("\n")
    .join(" ")
    .replace(/\s+/g, " ")
    .match(/\((every waiting job|\d+ of the \d+ waiting jobs)[^)]*\)/)?.[0];

describe("plan: the queue's [example] jobs", () => {
  it("says the dev stack's waiting jobs are examples on purpose, which pulumi up does not submit", () => {
    const plan = planStack(repoStack("dev"), { runtime });
    expect(plan.queue!.admission.queued.length).toBeGreaterThan(0);
    expect(queueNote(planText("dev", plan))).toMatch(/^\(every waiting job is an \[example\], on purpose: pulumi up/);
  });

  it("counts the examples among waiting jobs that are not all examples, and says nothing when none are", () => {
    const config = repoStack("dev");
    const plan = planStack(config, { runtime });
    const waiting = plan.queue!.admission.queued.map((q) => q.workload);
    const mixed = planStack(
      { ...config, workloads: config.workloads.map((w) => (w.name === waiting[0] ? { ...w, example: false } : w)) },
      { runtime },
    );
    expect(queueNote(planText("dev", mixed))).toContain(`(${waiting.length - 1} of the ${waiting.length} waiting jobs`);
    const none = planStack(
      { ...config, workloads: config.workloads.map((w) => ({ ...w, example: false })) },
      { runtime },
    );
    expect(none.queue!.admission.queued.length).toBe(waiting.length);
    expect(queueNote(planText("dev", none))).toBeUndefined();
  });
});
