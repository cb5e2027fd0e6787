/**
 * IAM policy documents by meaning: JSON text with a key written twice (however it is spelled: escapes, case, spacing,
 * depth), and escalating actions however they are written (any case, a pattern) on any wildcard of roles or keys.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repeatedKeys, RULES, SENSITIVE_ACTIONS, wildcardResource } from "../../policy/rules";

const RUNS = { numRuns: 60, seed: 47 };
const key = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
const escaped = (k: string) =>
  [...k].map((c, i) => (i === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : c)).join("");
const escalation = RULES.find((r) => r.name === "no-unscoped-escalation-iam")!;

describe("policy documents as JSON text", () => {
  it("finds no repeated key in any JSON.stringify output (keys distinct ignoring case)", () => {
    fc.assert(
      fc.property(fc.dictionary(key, fc.jsonValue({ maxDepth: 2 })), (o) => {
        expect(repeatedKeys(JSON.stringify({ Statement: [o] }))).toEqual([]);
      }),
      RUNS,
    );
  });

  it("finds a key written again at any depth, escaped, upper-cased or spaced, with its path", () => {
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 }),
        fc.nat(),
        fc.constantFrom("plain", "escaped", "upper"),
        fc.constantFrom("", " ", "\n  "),
        (o, pick, spelling, space) => {
          const keys = Object.keys(o);
          const k = keys[pick % keys.length]!;
          const again = spelling === "escaped" ? escaped(k) : spelling === "upper" ? k.toUpperCase() : k;
          const inner = JSON.stringify(o, null, space ? 2 : undefined).slice(0, -1);
          const text = `{"Statement":[${inner},${space}"${again}"${space}:${space}1}]}`;
          expect(() => JSON.parse(text) as unknown).not.toThrow();
          const found = repeatedKeys(text);
          expect(found).toHaveLength(1);
          expect(found[0]!.first).toBe(k);
          expect(found[0]!.path).toBe(`.Statement[0].${spelling === "upper" ? k.toUpperCase() : k}`);
        },
      ),
      RUNS,
    );
  });
});

describe("escalating actions however written", () => {
  const action = fc.constantFrom(...Object.keys(SENSITIVE_ACTIONS));
  const recased = (a: string, flips: boolean[]) =>
    [...a].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c.toLowerCase())).join("");
  const resource = fc.constantFrom(
    "arn:aws:iam::*:role/x",
    "arn:aws:iam::123456789012:role/*",
    "arn:aws:kms:us-east-1:123456789012:key/*",
    "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:*",
  );

  it("refuses any case and any trailing pattern of a sensitive action on a wildcard of every role, key or account", () => {
    fc.assert(
      fc.property(action, fc.array(fc.boolean(), { minLength: 1 }), fc.nat(), resource, (a, flips, cut, r) => {
        const name = a.slice(a.indexOf(":") + 1);
        const written = recased(a, flips).slice(0, a.indexOf(":") + 2 + (cut % name.length)) + (cut % 2 ? "*" : "");
        const spelled = cut % 2 ? written : recased(a, flips);
        expect(wildcardResource(r)).toBeDefined();
        const policy = JSON.stringify({ Statement: [{ Effect: "Allow", Action: spelled, Resource: r }] });
        const found = escalation.check({ type: "aws:iam/policy:Policy", name: "p", props: { policy } });
        expect(found, spelled).toHaveLength(1);
      }),
      RUNS,
    );
  });

  it("passes a name prefix and a named ARN", () => {
    for (const r of ["arn:aws:iam::123456789012:role/ray-gpu-*", "arn:aws:iam::123456789012:role/service-role/*"])
      expect(wildcardResource(r), r).toBeUndefined();
  });
});
