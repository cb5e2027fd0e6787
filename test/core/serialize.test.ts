import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sortKeys, stableJson } from "../../core/serialize";

/** What stableJson promised before it was written in one pass: a sorted copy, then JSON.stringify. */
const reference = (value: unknown) => `${JSON.stringify(sortKeys(value), null, 2)}\n`;

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

describe("stableJson", () => {
  it("writes exactly what JSON.stringify writes of the sorted copy, for any value", () => {
    fc.assert(
      fc.property(values, (value) => {
        expect(stableJson(value)).toBe(reference(value));
      }),
      { numRuns: 400, seed: 46 },
    );
  });

  it("sorts keys by code point at every level and leaves undefined fields out", () => {
    const value = { b: [{ z: 1, a: undefined, é: 2, A: 3 }], a: Number.NaN, c: {} };
    expect(stableJson(value)).toBe(reference(value));
    expect(stableJson(value)).toBe(
      '{\n  "a": null,\n  "b": [\n    {\n      "A": 3,\n      "z": 1,\n      "é": 2\n    }\n  ],\n  "c": {}\n}\n',
    );
  });
});
