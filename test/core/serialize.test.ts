import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stableJson, stableJsonPieces } from "../../core/serialize";

/** JSON values, plus what JSON.stringify leaves out or turns to null (undefined, non-finite numbers), nested. */
const values = fc.letrec((tie) => ({
  leaf: fc.oneof(
    fc.string({ unit: "binary" }),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.constant(-0),
  ),
  node: fc.oneof(
    { depthSize: "small" },
    tie("leaf"),
    fc.array(tie("node"), { maxLength: 4 }),
    fc.dictionary(fc.string({ unit: "binary", maxLength: 6 }), tie("node"), { maxKeys: 5 }),
  ),
})).node;

/** Keys that sort before "workloads" (as every key of plan.json but it does). */
const earlyKey = fc.string({ unit: "binary", maxLength: 8 }).filter((k) => k < "workloads" && k !== "__proto__");

describe("stableJsonPieces", () => {
  it("joins to exactly the stableJson of the whole document, for any head and items", () => {
    fc.assert(
      fc.property(
        fc.dictionary(earlyKey, values, { maxKeys: 5 }),
        fc.array(values, { maxLength: 5 }),
        (head, items) => {
          const pieces = [...stableJsonPieces(head, "workloads", items)];
          expect(pieces.join("")).toBe(stableJson({ ...head, workloads: items }));
          expect(pieces).toHaveLength(items.length + 2);
        },
      ),
      { numRuns: 300, seed: 46 },
    );
  });

  it("refuses a head with a key that would sort after the pieces' own", () => {
    expect(() => [...stableJsonPieces({ zone: 1 }, "workloads", [])]).toThrow(/zone must sort before workloads/);
    expect(stableJson({ a: { b: [1, "x\ny"] }, workloads: [{ c: null }] })).toBe(
      [...stableJsonPieces({ a: { b: [1, "x\ny"] } }, "workloads", [{ c: null }])].join(""),
    );
  });
});
