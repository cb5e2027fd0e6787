/**
 * Stack files read as Pulumi reads them, checked against the real go-yaml v3 (Debian's golang-gopkg-yaml.v3-dev, built
 * with Debian's Go; Pulumi decodes Pulumi.yaml and Pulumi.<stack>.yaml with it): for every scalar of a seeded corpus
 * (number-like, bool-like and time-like text, the review's examples, and documents under `%YAML 1.1`), the reader
 * either refuses the document or reads exactly the value go-yaml v3 decodes (typed: int, float, bool, null, text,
 * timestamp, and keys that must be text).
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../core/errors";
import { goYamlV3Scalar } from "../../../cli/input/go-yaml-scalars";
import { parsePulumiYamlText } from "../../../cli/input/pulumi-yaml";
import { parseYamlText } from "../../../cli/input/yaml";
import { buildGoTool, goYamlSkip } from "../../helpers/go-yaml";
import { mulberry32 } from "../../helpers/random";

const skip = goYamlSkip("v3");

/** A value as test/helpers/goyaml3 writes it: Go's type and value. */
type Typed = { t: string; v: unknown };

let built: string | undefined;

/** test/helpers/goyaml3 built once per run (GOPATH mode, no network). */
function helper(): string {
  if (built) return built;
  const bin = buildGoTool(resolve(__dirname, "../../helpers/goyaml3/main.go"));
  return (built = bin);
}

/** What go-yaml v3 decodes each document to (into `any`, as Pulumi's LoadProjectStackBytes does first). */
function goYamlV3(docs: readonly string[]): Typed[] {
  const input = docs.map((d) => JSON.stringify(d)).join("\n") + "\n";
  const out = execFileSync(helper(), { input, encoding: "utf8", maxBuffer: 1 << 26 });
  return out
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Typed);
}

/** Whether our value is go-yaml v3's: same type family, same value; keys must be text to both. */
function same(g: Typed, ours: unknown): boolean {
  switch (g.t) {
    case "null":
      return ours === null;
    case "bool":
    case "str":
      return ours === g.v;
    case "int":
      return typeof ours === "number" && ours === Number(g.v);
    case "float":
      return typeof ours === "number" && Number.isFinite(ours) && ours === Number(g.v);
    case "seq": {
      const items = g.v as Typed[];
      return Array.isArray(ours) && ours.length === items.length && items.every((t, i) => same(t, ours[i]));
    }
    case "map": {
      const pairs = g.v as [Typed, Typed][];
      if (ours === null || typeof ours !== "object" || Array.isArray(ours)) return false;
      const o = ours as Record<string, unknown>;
      return (
        Object.keys(o).length === pairs.length &&
        pairs.every(([k, v]) => k.t === "str" && Object.hasOwn(o, k.v as string) && same(v, o[k.v as string]))
      );
    }
    default: // time, error, other: never a value we may read
      return false;
  }
}

const read = new Map<string, { value: unknown } | "refused">();

/** Our reading: the value, or "refused". */
function ours(doc: string): { value: unknown } | "refused" {
  if (!read.has(doc))
    try {
      read.set(doc, { value: parsePulumiYamlText(doc, "Pulumi.t.yaml") });
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      read.set(doc, "refused");
    }
  return read.get(doc)!;
}

/** The `yaml` library's own reading (YAML 1.2 core schema), or undefined where it refuses the document. */
function plain(doc: string): unknown {
  try {
    return parseYamlText(doc, "Pulumi.t.yaml", { coreSchema: true });
  } catch {
    return undefined;
  }
}

/** A seeded generator (mulberry32). */
function seeded(seed: number) {
  const random = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const text = (alphabet: string, max: number) =>
    Array.from({ length: 1 + Math.floor(random() * max) }, () => pick([...alphabet])).join("");
  return { random, pick, text };
}

const NAMED = [
  ...["010", "030", "0777", "08", "09", "1_000", "0x1F", "0X1F", "0o17", "0O17", "0b101", "-0b101", "0b-101", "-0o17"],
  ...[
    "+1",
    "-0",
    "+0x1F",
    "1e3",
    "1.0e+3",
    "1E3",
    ".5",
    "+.5",
    "-.5",
    "1.",
    ".5_0",
    "1e400",
    ".1e400",
    "1e_5",
    "0.1_0",
  ],
  ...[".nan", ".NaN", ".inf", "-.Inf", "+.INF", "+.nan", "~", "null", "Null", "NULL", "true", "True", "TRUE", "tRUE"],
  ...["yes", "no", "on", "off", "y", "n", "Yes", "NO", "0:30", "1:20:30", "190:20:30", "<<", "9223372036854775808"],
  ...["18446744073709551616", "-9223372036854775809", "99999999999999999999", "0x8000000000000000", "1__0", "1_"],
  ...["2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10", "2001-12-14T21:59:43Z", "2001-02-30"],
  ...["2001-1-2", "2001-12-14 21:59:43.10 -5", "2000-02-29", "1900-02-29", "2001-12-14T25:00:00Z", "20011-12-14"],
];

/** A merge key, which both readers merge. */
const MERGE = "base: &b {kind: A, gpus: 4}\nw: {<<: *b, gpus: 8}\n";

/** Number-like, bool-like and time-like scalars, from a fixed seed. */
function corpus(count: number): string[] {
  const g = seeded(45);
  const num = () => g.text("0123456789_+-.eExXoObBaAfF", 7);
  const word = () => g.pick(["y", "Y", "yes", "n", "No", "on", "ON", "off", "true", "fAlse", "null", "~", "NaN"]);
  const two = () => String(Math.floor(g.random() * 40)).padStart(g.random() < 0.5 ? 2 : 1, "0");
  const time = () => {
    const date = `${g.pick(["2001", "2000", "1999", "0001", "9999"])}-${two()}-${two()}`;
    if (g.random() < 0.3) return date;
    const clock = `${two()}:${two()}:${two()}${g.pick(["", ".1", ".123456789123", ",5", "."])}`;
    const zone = g.pick(["", "Z", "z", "+05:00", "-0500", "+5:00", "-05:30", "+99:99"]);
    return `${date}${g.pick(["T", "t", " ", "  "])}${clock}${zone}`;
  };
  return Array.from({ length: count }, () => {
    const r = g.random();
    return r < 0.55 ? num() : r < 0.65 ? word() : time();
  });
}

describe.skipIf(skip)("stack files under the real go-yaml v3", () => {
  it("refuses or reads as go-yaml v3 every scalar of 4,000 generated ones and the named examples", () => {
    const scalars = [...NAMED, ...corpus(4000)];
    const docs = [
      ...scalars.map((s) => `v: ${s}\n`),
      ...scalars.slice(0, 600).map((s) => `${s}: 1\n`),
      ...[...NAMED, ...scalars.slice(0, 300)].map((s) => `%YAML 1.1\n---\nv: ${s}\n`),
      ...["%YAML 1.2\n---\nv: 1\n", "%YAML 1.1\n%YAML 1.1\n---\nv: 1\n", "v: !!int 010\n", "v: ! 010\n"],
      ...["v: !!str 010\n", "v: !!float 1\n", "config:\n  a: &x 010\n  b: *x\n", "v: [010, 1_0, yes]\n", MERGE],
    ];
    const answers = goYamlV3(docs);
    expect(answers).toHaveLength(docs.length);
    const wrong = docs.flatMap((doc, i) => {
      const read = ours(doc);
      return read === "refused" || same(answers[i]!, read.value) ? [] : [{ doc, go: answers[i], ours: read.value }];
    });
    expect(wrong).toEqual([]);
    // And it refuses only where the two readers differ: tags aside (it refuses all but !!str), and times with more
    // than 9 fraction digits, which Go 1.19's time.Parse refuses and later Go (Pulumi's builds) reads as times.
    const policy = (doc: string) => doc.includes("!") || /\.\d{10}/.test(doc);
    const needless = docs.filter((doc, i) => !policy(doc) && ours(doc) === "refused" && same(answers[i]!, plain(doc)));
    expect(needless).toEqual([]);
    // The corpus exercises both sides: most values are read, and many are refused.
    const refused = docs.filter((d) => ours(d) === "refused").length;
    expect(refused).toBeGreaterThan(200);
    expect(docs.length - refused).toBeGreaterThan(2000);
    expect(ours(MERGE)).toEqual({ value: { base: { kind: "A", gpus: 4 }, w: { kind: "A", gpus: 8 } } });
  });

  it("is a real check: go-yaml v3 reads 010 as 8, 1_000 as 1000, 2001-12-14 as a time, and yes as text under 1.1", () => {
    const answers = goYamlV3(["v: 010\n", "v: 1_000\n", "v: 2001-12-14\n", "%YAML 1.1\n---\nv: yes\n"]);
    const values = answers.map((a) => (a.v as [Typed, Typed][])[0]![1]);
    expect(values).toEqual([
      { t: "int", v: "8" },
      { t: "int", v: "1000" },
      { t: "time", v: "2001-12-14 00:00:00 +0000 UTC" },
      { t: "str", v: "yes" },
    ]);
  });

  it("names go-yaml v3's timestamp text exactly as Go prints it (the text Pulumi hands the program)", () => {
    const times = ["2001-12-14", "2001-12-14T21:59:43.10Z", "2001-12-14 21:59:43.123456789", "2001-1-2t3:4:5Z"];
    const answers = goYamlV3(times.map((t) => `v: ${t}\n`)).map((a) => (a.v as [Typed, Typed][])[0]![1].v);
    expect(times.map((t) => goYamlV3Scalar(t))).toEqual(answers.map((text) => ({ kind: "timestamp", text })));
  });
});
