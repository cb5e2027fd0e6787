/**
 * "Did you mean": the hint for a misspelt key or model name, at a cost linear in the name whatever its length (a 4 MB
 * model name once took 57 s of CPU, each candidate's edit distance measured in full).
 */
import { describe, expect, it } from "vitest";
import { MODEL_NAMES } from "../../../core/models";
import { suggest } from "../../../core/config/zod-issues";

describe("suggest", () => {
  it("names the closest key within a third of its letters (or 2), and nothing further", () => {
    expect(suggest("nmae", ["name", "model", "gpus"])).toBe("name");
    expect(suggest("us-east1", ["us-east-1", "us-west-2"])).toBe("us-east-1");
    expect(suggest("completely-else", ["name", "model"])).toBeUndefined();
  });

  it("never measures a candidate whose length alone puts it out of reach: a 1,000-character key measures none", () => {
    const measured: string[] = [];
    const counting = (a: string, b: string) => (measured.push(b), Math.abs(a.length - b.length));
    expect(suggest("k".repeat(1000), MODEL_NAMES, counting)).toBeUndefined();
    expect(measured).toEqual([]);
    suggest("meta-llama/Llama-3.2-1b", MODEL_NAMES, counting);
    expect(measured.length).toBeGreaterThan(0);
    expect(measured.every((m) => Math.abs(m.length - 23) <= 7)).toBe(true);
  });
});
