/**
 * An image reference is accepted exactly when the kubelet's reader accepts it: distribution's reference package with
 * go-digest (Debian's sources, built with Debian's Go: test/helpers/imageref), on 2,000 references generated from the
 * parts each rule turns on (registries, path parts and separators, tags, digests by algorithm, case and length).
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { imageReferenceProblem } from "../../../core/config/image-reference";
import { buildGoTool } from "../../helpers/go-yaml";
import { findTool, missingReason } from "../../helpers/tools";

/** Where scripts/go-image-reference.sh puts the two packages' sources. */
const GOPATH = process.env["IMAGEREF_GOPATH"] ?? "/usr/local/share/ray-gpu/gocode";
const skip =
  missingReason("go", findTool("go", "GO"), "apt-get install golang-go") ??
  (existsSync(join(GOPATH, "src/github.com/docker/distribution/reference"))
    ? undefined
    : missingReason("distribution's reference package", undefined, "bash scripts/go-image-reference.sh"));

const hex = (n: number, digit = "a") => digit.repeat(n);
const REGISTRIES = ["", "docker.io/", "localhost/", "localhost:5000/", "123456789012.dkr.ecr.us-east-1.amazonaws.com/"];
const BAD_REGISTRIES = ["Reg.IO/", "my_reg.io/", "-bad.io/", "a..b/", "host:port/", "reg.io:/", "UPPER/"];
const PATHS = ["rayproject/ray", "ray", "a/b/c", "a__b", "a___b", "a--b", "a.b", "a_b", "9x/y"];
const BAD_PATHS = ["A/b", "a-", "_a", "a..b", "", "a//b", "a b", "a/", "ray:x/y"];
const TAGS = ["", ":2.58.0-py311-gpu", ":latest", ":_x", `:${hex(128, "x")}`];
const BAD_TAGS = [":.x", ":-x", `:${hex(129, "x")}`, ":a b", ":", ":a:b", ":ü"];
const DIGESTS = ["", `@sha256:${hex(64)}`, `@sha384:${hex(96)}`, `@sha512:${hex(128)}`];
const BAD_DIGESTS = [
  `@sha256:${hex(64, "A")}`,
  `@md5:${hex(32)}`,
  `@sha256:${hex(63)}`,
  `@sha1:${hex(40)}`,
  "@",
  `@sha256:${hex(65)}`,
];

/** The kubelet reader's verdict ("ok" or its error) on each reference, in one run of the tool. */
function kubeletVerdicts(refs: readonly string[]): string[] {
  const tool = buildGoTool("./test/helpers/imageref", GOPATH);
  const out = execFileSync(tool, { input: refs.map((r) => JSON.stringify(r)).join("\n") + "\n", encoding: "utf8" });
  return out.trimEnd().split("\n");
}

describe.skipIf(skip)("image references, as the kubelet reads them", () => {
  it("accepts exactly what distribution's reference reader accepts, on 2,000 generated references", () => {
    const part = (good: readonly string[], bad: readonly string[]) =>
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...good) }, { weight: 1, arbitrary: fc.constantFrom(...bad) });
    const reference = fc
      .tuple(part(REGISTRIES, BAD_REGISTRIES), part(PATHS, BAD_PATHS), part(TAGS, BAD_TAGS), part(DIGESTS, BAD_DIGESTS))
      .map((p) => p.join(""));
    const refs = [...fc.sample(reference, { seed: 20261205, numRuns: 2000 }), hex(64), `a/${hex(260, "b")}`];
    const verdicts = kubeletVerdicts(refs);
    const disagreements = refs
      .map((r, i) => ({ r, kubelet: verdicts[i], ours: imageReferenceProblem(r) ?? "ok" }))
      .filter((d) => (d.kubelet === "ok") !== (d.ours === "ok"));
    expect(disagreements).toEqual([]);
    expect(verdicts.filter((v) => v === "ok").length).toBeGreaterThan(500);
  });
});

describe("image reference messages", () => {
  it("name what is wrong and give the form", () => {
    expect(imageReferenceProblem(`r@sha256:${hex(64, "A")}`)).toMatch(
      /^its sha256 digest must be exactly 64 lowercase hex digits: an image reference is \[registry/,
    );
    expect(imageReferenceProblem(`r@md5:${hex(32)}`)).toMatch(
      /^its digest algorithm "md5" is not one the kubelet verifies/,
    );
    expect(imageReferenceProblem("Ray/ray:1")).toMatch(/^its path part "Ray"/);
    expect(imageReferenceProblem("-reg.io/ray:1")).toMatch(/^its registry "-reg.io" is not a host\[:port\]/);
    expect(imageReferenceProblem("ray:.x")).toMatch(/^its tag ".x" is not a tag/);
    expect(imageReferenceProblem("rayproject/ray:2.58.0-py311-gpu")).toBeUndefined();
  });
});
