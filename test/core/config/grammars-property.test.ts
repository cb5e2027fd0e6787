/**
 * Each grammar of core/config/grammars.ts against a model written from its source the way the source checks it
 * (character by character, not as a pattern): generated strings, near misses of valid ones included, must get the
 * same verdict from both. A grammar that drifts from its source in any class of input fails here, not only on the
 * listed examples of grammars.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grammar, GRAMMARS, type GrammarName } from "../../../core/config/grammars";

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = LOWER.toUpperCase();
const DIGITS = "0123456789";
const isIn = (set: string) => (c: string) => set.includes(c);
const all = (s: string, ok: (c: string) => boolean) => [...s].every(ok);

/** Kubernetes' DNS-1123 label without its length (IsDNS1123Label's regexp, as the loop it means). */
const dns1123Label = (s: string) =>
  s.length > 0 && all(s, isIn(LOWER + DIGITS + "-")) && s[0] !== "-" && s[s.length - 1] !== "-";

/** The models, from each grammar's source. */
const MODELS: Record<GrammarName, (s: string) => boolean> = {
  rfc1035Label: (s) => dns1123Label(s) && s.length <= 63 && isIn(LOWER)(s[0]!),
  rfc1123Subdomain: (s) => s.length <= 253 && s.split(".").every(dns1123Label),
  secretDataKey: (s) =>
    s.length > 0 && s.length <= 253 && all(s, isIn(LOWER + UPPER + DIGITS + "-._")) && s !== "." && !s.startsWith(".."),
  eksClusterName: (s) =>
    s.length >= 1 &&
    s.length <= 100 &&
    isIn(LOWER + UPPER + DIGITS)(s[0]!) &&
    all(s, isIn(LOWER + UPPER + DIGITS + "_-")),
  availabilityZone: (s) => {
    const parts = s.split("-");
    const [country, ...rest] = parts;
    if (rest[0] === "gov") rest.shift(); // GovCloud: us-gov-west-1a
    if (rest.length !== 2 || country!.length !== 2 || !all(country!, isIn(LOWER))) return false;
    const [area, last] = rest as [string, string];
    return (
      area.length > 0 && all(area, isIn(LOWER)) && last.length === 2 && isIn(DIGITS)(last[0]!) && isIn(LOWER)(last[1]!)
    );
  },
  iamRoleArn: (s) => {
    const m = /^arn:aws:iam::(\d{12}):role\//.exec(s);
    if (!m) return false;
    const rest = s.slice(m[0].length);
    const cut = rest.lastIndexOf("/");
    const name = rest.slice(cut + 1);
    const path = cut < 0 ? undefined : rest.slice(0, cut);
    const nameOk = name.length >= 1 && name.length <= 64 && all(name, isIn(LOWER + UPPER + DIGITS + "_+=,.@-"));
    const pathOk =
      path === undefined || (path.length >= 1 && path.length <= 510 && all(path, (c) => c > " " && c <= "~"));
    return nameOk && pathOk;
  },
  s3KeyPrefix: (s) => {
    if (s.length > 1024) return false;
    if (s === "") return true;
    const parts = s.split("/");
    return (
      parts.pop() === "" &&
      parts.every((p) => p.length > 0 && isIn(LOWER + DIGITS)(p[0]!) && all(p, isIn(LOWER + DIGITS + "._-")))
    );
  },
  peftModuleName: (s) => s.length > 0 && isIn(LOWER + UPPER + "_")(s[0]!) && all(s, isIn(LOWER + UPPER + DIGITS + "_")),
};

/** Characters that matter to some grammar, and some that matter to none. */
const ALPHABET = [...(LOWER.slice(0, 6) + "xyz" + "AZ" + "019" + "-._/:+=,@ ~\u00e9")];
const anyString = fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 40 });

/** Patterns to generate from where the grammar's own has what fast-check cannot generate from (a lookahead). */
const SEEDS: Partial<Record<GrammarName, RegExp>> = { secretDataKey: /^[-._a-zA-Z0-9]+$/ };

/** Strings near valid ones: a valid value with one character changed, inserted or removed. */
function nearValid(name: GrammarName) {
  const valid = fc.stringMatching(SEEDS[name] ?? GRAMMARS[name].pattern, { size: "small" });
  return fc
    .tuple(valid, fc.nat(), fc.constantFrom(...ALPHABET), fc.constantFrom("set", "insert", "remove", "keep"))
    .map(([v, at, c, how]) => {
      const i = v.length === 0 ? 0 : at % v.length;
      if (how === "keep") return v;
      if (how === "remove") return v.slice(0, i) + v.slice(i + 1);
      return v.slice(0, i) + c + v.slice(how === "set" ? i + 1 : i);
    });
}

describe("grammars against models of their sources", () => {
  for (const name of Object.keys(GRAMMARS) as GrammarName[])
    it(`${name}: the schema and the model agree on generated and near-valid strings`, () => {
      const schema = grammar(name);
      fc.assert(
        fc.property(fc.oneof(anyString, nearValid(name)), (s) => {
          expect(schema.safeParse(s).success, JSON.stringify(s)).toBe(MODELS[name](s));
        }),
        { numRuns: 2_000 },
      );
    });

  it("agrees at the length limits", () => {
    for (const [name, value, ok] of [
      ["rfc1035Label", "a".repeat(63), true],
      ["rfc1035Label", "a".repeat(64), false],
      ["rfc1123Subdomain", `${"a".repeat(63)}.`.repeat(3) + "a".repeat(61), true],
      ["rfc1123Subdomain", `${"a".repeat(63)}.`.repeat(3) + "a".repeat(62), false],
      ["eksClusterName", "a".repeat(101), false],
      ["iamRoleArn", `arn:aws:iam::123456789012:role/${"p".repeat(510)}/${"n".repeat(64)}`, true],
      ["iamRoleArn", `arn:aws:iam::123456789012:role/${"p".repeat(511)}/n`, false],
      ["s3KeyPrefix", `${"a".repeat(1023)}/`, true],
      ["s3KeyPrefix", `${"a".repeat(1024)}/`, false],
    ] as const) {
      expect(grammar(name).safeParse(value).success, `${name} ${value.length}`).toBe(ok);
      expect(MODELS[name](value), `model ${name} ${value.length}`).toBe(ok);
    }
  });
});
