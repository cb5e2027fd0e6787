/**
 * go-yaml (Debian's golang-gopkg-yaml.v2-dev and golang-gopkg-yaml.v3-dev, built with Debian's golang-go in GOPATH
 * mode, no network) as test tools: each test/helpers/goyaml* program reads JSON-string documents on stdin, one per
 * line, and prints what go-yaml decodes each to.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findTool, missingReason } from "./tools";

/** GOPATH holding gopkg.in/yaml.v2 and .v3 (Debian installs them under /usr/share/gocode). */
const GOPATH = process.env["GOYAML_GOPATH"] ?? "/usr/share/gocode";
const go = findTool("go", "GO");

/** Why the tests of go-yaml `major` ("v2" or "v3") are skipped, or undefined; under CI a missing tool fails. */
export function goYamlSkip(major: "v2" | "v3"): string | undefined {
  const pkg = `golang-gopkg-yaml.${major}-dev`;
  return (
    missingReason("go", go, `apt-get install golang-go ${pkg}`) ??
    (existsSync(join(GOPATH, `src/gopkg.in/yaml.${major}`))
      ? undefined
      : missingReason(`gopkg.in/yaml.${major}`, undefined, `apt-get install ${pkg}`))
  );
}

/** The Go program `main` (a path) built into a fresh folder against `gopath`; returns the binary's path. */
export function buildGoTool(main: string, gopath = GOPATH): string {
  const bin = join(mkdtempSync(join(tmpdir(), "goyaml-")), "tool");
  // GOCACHE set here too: Go refuses to build without one when neither HOME nor XDG_CACHE_HOME is set (some CI).
  const GOCACHE = process.env["GOCACHE"] ?? join(tmpdir(), "ray-gpu-go-cache");
  const env = { ...process.env, GO111MODULE: "off", GOPATH: gopath, GOFLAGS: "", CGO_ENABLED: "0", GOCACHE };
  execFileSync(go!, ["build", "-o", bin, main], { env });
  return bin;
}
