/**
 * Rendered YAML read by go-yaml v2, the parser under kubectl, Argo CD and Flux (sigs.k8s.io/yaml): every string the
 * emitter writes must come back as that string. go-yaml removes `_` and tries Go's integer parser before YAML's rules,
 * so `0X1F`, `0O17`, `0B101` and `1e_5` are numbers to it and strings to the `yaml` library. The real go-yaml (Debian's
 * golang-gopkg-yaml.v2-dev, built with Debian's Go) reads the trial's examples and a fuzz of number-like strings.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { emitYaml } from "../../core/yaml-emit";
import { buildGoTool, goYamlSkip } from "../helpers/go-yaml";
import { mulberry32 } from "../helpers/random";

const skip = goYamlSkip("v2");

/** What go-yaml v2 decodes each document's `v` to: `string "<json>"` or a Go type name. */
function goYaml(docs: readonly string[]): string[] {
  const bin = buildGoTool(resolve(__dirname, "../helpers/goyaml/main.go"));
  const out = execFileSync(bin, { input: docs.map((d) => JSON.stringify(d)).join("\n") + "\n", encoding: "utf8" });
  return out.trimEnd().split("\n");
}

/** Strings of number-like characters, from a fixed seed (mulberry32). */
function numberLike(count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const alphabet = "0123456789_+-.eExXoObB:aAfF";
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 7) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(
      "",
    ),
  );
}

describe.skipIf(skip)("rendered YAML under go-yaml v2", () => {
  it("reads back every string the emitter writes: the trial's examples and 3,000 number-like strings", () => {
    const strings = [
      ...["0X1F", "0O17", "0B101", "1e_5", "0x1f", "017", "08", "1_000", "+1", ".5", "1e5", "-0b1", "0o7", "1:20"],
      ...numberLike(3000, 7),
    ];
    const answers = goYaml(strings.map((s) => emitYaml({ v: s })));
    const wrong = strings.filter((s, i) => answers[i] !== `string ${JSON.stringify(s)}`);
    expect(wrong).toEqual([]);
  });

  it("is a real check: go-yaml reads the same strings unquoted as numbers", () => {
    expect(goYaml(["v: 0X1F", "v: 1e_5", "v: 0B101", "v: 0O17"])).toEqual(["int", "float64", "int", "int"]);
  });
});
