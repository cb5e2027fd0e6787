import fc from "fast-check";
import { parse, stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { sortKeys } from "../../core/serialize";
import { emitYaml } from "../../core/yaml-emit";
import { planStack } from "../../workloads/stack";
import { repoStack, runtime } from "../helpers/fixtures";

/** Strings that stress quoting: keywords, numbers, dates, indicators, comments, quotes, blank and multi-line text. */
const tricky = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "yes",
    "No",
    "on",
    "OFF",
    "y",
    "~",
    "null",
    "true",
    "1",
    "0755",
    "1_000",
    "1e3",
    ".5",
    "-1",
    "+1",
    ".inf",
    "-.NaN",
  ),
  fc.constantFrom(
    "1:20",
    "2026-11-30",
    "64Gi",
    "2.58.0",
    "a: b",
    "a #b",
    "#x",
    "- x",
    "-c",
    "? x",
    "&a",
    "*a",
    "!t",
    "%x",
    "@x",
    "`x`",
    "|",
    ">",
    "a>=1",
    "x<y",
    "a!b",
    "a*b&c%d?e",
    "a ?b",
    "a >b",
  ),
  fc.constantFrom(
    "\n",
    "\n\n",
    " lead",
    "trail ",
    "a\n",
    "a\n\n\n",
    "\n a",
    "a\r\nb",
    "tab\there",
    'quote"s',
    "it's",
    "ünïcödé",
    "\u0007bell",
  ),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.string({
    unit: fc.constantFrom(
      "a",
      " ",
      "\n",
      ":",
      "#",
      "-",
      "'",
      '"',
      "\\",
      "0",
      ".",
      "\t",
      ">",
      "<",
      "!",
      "*",
      "&",
      "%",
      "?",
      "~",
      "(",
      ")",
      "{",
      "}",
      "[",
      "]",
      ",",
      "+",
      "_",
      "/",
    ),
    maxLength: 30,
  }),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: "small" }, tie("scalar"), tie("list"), tie("map")),
  scalar: fc.oneof(
    tricky,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.boolean(),
    fc.constant(null),
  ),
  list: fc.array(tie("any"), { maxLength: 4 }),
  map: fc.dictionary(tricky, tie("any"), { maxKeys: 4 }),
}));

describe("the YAML emitter", () => {
  it("property: YAML 1.2 and 1.1 parsers read back exactly the value written", () => {
    fc.assert(
      fc.property(value.any, (v) => {
        const text = emitYaml(v);
        expect(parse(text)).toEqual(v);
        expect(parse(text, { version: "1.1" })).toEqual(v);
      }),
      { numRuns: Number(process.env.YAML_PROPERTY_RUNS ?? 1500) },
    );
  });

  // The library writes YAML 1.2, where `yes` is a string; Kubernetes' parser reads YAML 1.1, where it is a boolean, so
  // the emitter quotes 1.1 keywords (a NetworkPolicy's `ray.io/is-ray-node: "yes"`): the one allowed difference.
  const quoted11Keywords = (text: string) => text.replace(/: (yes|no|on|off|y|n)$/gim, ': "$1"');

  it("writes what the yaml library writes for every rendered object of both stacks, 1.1 keywords quoted", () => {
    for (const env of ["dev", "prod"] as const) {
      const plan = planStack(repoStack(env), { runtime });
      for (const obj of [...plan.shared, ...plan.objects.flatMap((o) => o.objects)]) {
        const expected = quoted11Keywords(stringify(sortKeys(obj), { lineWidth: 0 }));
        expect(emitYaml(sortKeys(obj))).toBe(expected);
        expect(emitYaml(obj, { sortKeys: true })).toBe(expected);
      }
    }
  });
});
