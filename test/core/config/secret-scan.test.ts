/**
 * The one-pass secret checks: they decide as the patterns they replaced on generated texts (the patterns ran over a
 * whole value and took quadratic time: 0.8 s for 40 kB), find the command-line shapes those missed, and decide 4 MiB
 * adversarial texts (the old worst cases) without running away; how fast is `npm run bench:secrets`'s to say.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { credentialIn } from "../../../core/config/secret-scan";
import { secretInCommand, secretLooking } from "../../../core/config/secrets";
import { shellWords } from "../../../core/config/shell-words";

/** The patterns credentialIn replaced (the private key's run bounded to 40 characters, as now), as the reference. */
const inText = (body: string) => new RegExp(`(?<![A-Za-z0-9])(?:${body})(?![A-Za-z0-9])`);
const REFERENCE: readonly { issuer: string; pattern: RegExp }[] = [
  { issuer: "a Hugging Face token", pattern: inText("hf_[A-Za-z0-9]{20,}") },
  { issuer: "an OpenAI-style API key", pattern: inText("sk-[A-Za-z0-9_-]{20,}") },
  {
    issuer: "a GitHub token",
    pattern: inText("(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"),
  },
  { issuer: "a GitLab token", pattern: inText("glpat-[A-Za-z0-9_-]{20,}") },
  { issuer: "a Slack token", pattern: inText("xox[abprs]-[A-Za-z0-9-]{10,}") },
  { issuer: "an AWS access key id", pattern: inText("(?:AKIA|ASIA)[A-Z0-9]{16}") },
  { issuer: "a private key", pattern: /-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----/ },
  { issuer: "a JSON Web Token", pattern: inText("eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}") },
  { issuer: "a bearer credential", pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/i },
  { issuer: "a URL with a password", pattern: /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@/i },
];

/** What the generated texts are made of: every prefix the patterns turn on, separators, and runs near each bound. */
const PREFIXES = ["hf_", "sk-", "ghp_", "github_pat_", "glpat-", "xoxb-", "xoxq-", "AKIA", "ASIA", "eyJ", "Bearer "];
const OTHERS = ["://", "bearer\t", "-----BEGIN ", "RSA ", "PRIVATE KEY-----", "u:p@", ":", "@", "eyJ"];
const SEPARATORS = [..."_-./:@ =+~\t\u00a0"];
const BOUNDS = [1, 2, 7, 8, 9, 10, 15, 16, 17, 19, 20, 21, 29, 30, 31];
const piece = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PREFIXES, ...OTHERS) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom("x", "Q", "7", "_", "-", "xQ7"), fc.constantFrom(...BOUNDS))
      .map(([c, n]) => c.repeat(n).slice(0, n)),
  },
  { weight: 2, arbitrary: fc.constantFrom(...SEPARATORS) },
);
/** A run of `x` of a length near a bound, possibly empty. */
const run = fc.constantFrom(0, ...BOUNDS).map((n) => "x".repeat(n));
/** The shapes that need several pieces in order, with each part's length near its bound: JWTs and URLs. */
const shaped = fc.oneof(
  fc.tuple(run, fc.constantFrom(".", "-"), run, run).map(([a, dot, b, c]) => `eyJ${a}${dot}eyJ${b}.${c}`),
  fc.tuple(run, fc.constantFrom(":", "/"), run).map(([user, colon, pw]) => `s://${user}${colon}${pw}@h`),
);

describe("credentialIn, one pass", () => {
  it("finds a credential exactly where the replaced patterns did, on 20,000 generated texts", () => {
    const text = fc.array(fc.oneof({ weight: 5, arbitrary: piece }, { weight: 1, arbitrary: shaped }), {
      maxLength: 10,
    });
    fc.assert(
      fc.property(text, (pieces) => {
        const t = pieces.join("");
        const expected = REFERENCE.filter((r) => r.pattern.test(t)).map((r) => r.issuer);
        const found = credentialIn(t);
        expect(found === undefined ? [] : [found]).toEqual(
          found === undefined ? expected : [expected.find((e) => e === found)],
        );
        expect(found === undefined).toBe(expected.length === 0);
      }),
      { seed: 20261205, numRuns: 20000 },
    );
  });

  it("decides 1 MiB texts built on the old worst cases, and still finds the credential at their end", () => {
    const MIB = 1024 * 1024;
    const fill = (unit: string) => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB);
    for (const unit of ["a", "sk-", "eyJ-", "a://uuuu:", "--a-", "-----BEGIN A", "Bearer "]) {
      const text = fill(unit);
      expect(credentialIn(`${text} `), unit).toBe(unit === "sk-" ? "an OpenAI-style API key" : undefined);
      expect(credentialIn(`${text} hf_${"x".repeat(24)}`), unit).toBeDefined();
      expect(secretInCommand(text), unit).toBe(unit === "sk-" ? "it holds an OpenAI-style API key" : undefined);
      expect(secretLooking("X", text), unit).toBe(
        unit === "sk-" ? "its value holds an OpenAI-style API key" : undefined,
      );
    }
  });
});

describe("secretInCommand, by shell words", () => {
  it("finds flags spelled with - or _, quoted values, headers and secret assignments", () => {
    const cases: Record<string, string> = {
      "python t.py --hf_token abcdef123": "it gives --hf_token a value in clear text",
      "python t.py --secret_key=abc": "it gives --secret_key a value in clear text",
      'python t.py --password "a b c"': "it gives --password a value in clear text",
      "python t.py --api-key 'k'": "it gives --api-key a value in clear text",
      "python t.py -token=x": "it gives -token a value in clear text",
      "curl -H 'Authorization: Basic dXNlcjpwdw==' https://x":
        "it gives the Authorization header a credential in clear text",
      'curl -H "X-Api-Key: abc" https://x': "it gives the X-Api-Key header a credential in clear text",
      "curl -H Authorization: token abc https://x": "it gives the Authorization header a credential in clear text",
      "env HF_TOKEN=abc python t.py": "it sets HF_TOKEN in clear text, and its name says it holds a secret",
    };
    for (const [command, why] of Object.entries(cases)) expect(secretInCommand(command), command).toBe(why);
  });

  it("accepts variables, empty values, look-alike flags and a header without a credential", () => {
    for (const command of [
      "python t.py --hf_token $HF_TOKEN",
      'python t.py --password "${DB_PASSWORD}"',
      "python t.py --max-tokens 512 --tokenizer fast --token-limit 5 --password-file /run/pw",
      "python t.py --token --verbose",
      "python t.py --api-key=",
      "curl -H 'Authorization: Bearer $TOKEN' https://x",
      "curl -H 'Content-Type: application/json' https://x",
      "HF_HOME=/cache OMP_NUM_THREADS=4 python t.py",
    ])
      expect(secretInCommand(command), command).toBeUndefined();
  });

  it("splits words as a POSIX shell does", () => {
    expect(shellWords(`a 'b c' "d \\" e" f\\ g '' h\\\ni "\\x"`)).toEqual([
      "a",
      "b c",
      'd " e',
      "f g",
      "",
      "hi",
      "\\x",
    ]);
  });
});
