/**
 * `ray-gpu plan` of a stack with a spot-with-fallback pool: the text, the JSON and the page say what the pool costs at
 * most (every node on demand) and how long its jobs wait for spot; other pools print as before.
 */
import { describe, expect, it } from "vitest";
import { planDocument } from "../../../cli/plan/document";
import { planHtml } from "../../../cli/plan/html";
import { wrapped } from "../../../cli/output/columns";
import { planText } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { repoStack, runtime } from "../../helpers/fixtures";
import { FALLBACK_POOL, prodWithFallback } from "../../helpers/spot-fallback";

const NOTE =
  "spot first (the price varies), on demand when spot has no node within 5 min: at most $45.38/h with all 8 nodes " +
  "on demand";

describe("ray-gpu plan with a spot-with-fallback pool", () => {
  const plan = planStack(prodWithFallback(5), { runtime });

  it("prints the pool's bound under the pools table, and nothing more for the other pools", () => {
    const text = planText("prod", plan).split("\n");
    const footnote = text.indexOf(
      "  (prices: approximate us-east-1 on-demand list prices; spot is cheaper and varies)",
    );
    const note = wrapped(`${FALLBACK_POOL}: ${NOTE}`, "  ");
    expect(text.slice(footnote + 1, footnote + 1 + note.length)).toEqual(note);
    expect(text[footnote + 1 + note.length]).toBe("");
    const plain = planText("prod", planStack(repoStack("prod"), { runtime })).split("\n");
    expect(plain[plain.indexOf(text[footnote]!) + 1]).toBe("");
  });

  it("gives the pool its wait in the JSON, and the page its bound under the capacity", () => {
    const doc = planDocument("prod", plan);
    expect(doc.pools.map((p) => ("spotWaitMinutes" in p ? p.spotWaitMinutes : null))).toEqual([null, 5, null, null]);
    expect(doc.pools[1]).toMatchObject({ capacityType: "spot-with-fallback", usdPerHourAtMax: 45.376 });
    expect(planHtml(doc)).toContain(`<td>spot-with-fallback<div class="muted">${NOTE}</div></td>`);
  });
});
