/**
 * What real pip decides for the runtime environment a RayJob carries: the requirements file Ray writes from
 * `runtimeEnvYAML`'s `pip.packages` (one line each, ray 2.58 `dependency_utils.gen_requirements_txt`), installed with
 * its `pip_install_options` as Ray runs them (`python -m pip install -r <file> <options>`). The wheels come from this
 * machine's package index through `pip download`; the install reads only those (`--no-index --find-links`, as a
 * mirror would serve them) into a fresh target.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeEnvYAML } from "../../../workloads/rayjob/runtime-env";

const python = process.env["PYTHON"] ?? "python3";
const dir = mkdtempSync(join(tmpdir(), "pip-hashes-"));
const wheels = join(dir, "wheels");

/** pip; `isolated`: without this machine's pip configuration (its index, links and constraints). */
const pip = (args: string[], isolated = false) =>
  spawnSync(python, ["-m", "pip", ...args], {
    encoding: "utf8",
    timeout: 300_000,
    // PIP_RETRIES=0: an index that cannot be reached (pypi.org, offline) fails at once instead of after retries.
    env: {
      ...process.env,
      PIP_RETRIES: "0",
      ...(isolated ? { PIP_CONFIG_FILE: devNull, PIP_FIND_LINKS: "", PIP_CONSTRAINT: "" } : {}),
    },
  });
const sha256Of = (project: string) => {
  const file = readdirSync(wheels).find((f) => f.toLowerCase().startsWith(`${project}-`))!;
  return createHash("sha256")
    .update(readFileSync(join(wheels, file)))
    .digest("hex");
};

/** Installs `packages` as Ray would from the job's runtime env; pip's exit status and output. */
function installAsRay(packages: string[], target: string) {
  const env = parse(runtimeEnvYAML({ pip: packages })!) as {
    pip: { packages: string[]; pip_install_options: string[] } | string[];
  };
  const spec = Array.isArray(env.pip) ? { packages: env.pip, pip_install_options: [] } : env.pip;
  const requirements = join(dir, `${target}.txt`);
  writeFileSync(requirements, spec.packages.map((p) => `${p}\n`).join(""));
  const out = pip(
    ["install", "-r", requirements, ...spec.pip_install_options, "--no-index", "--find-links", wheels].concat([
      "--target",
      join(dir, target),
    ]),
  );
  return { status: out.status, output: `${out.stdout}\n${out.stderr}`, options: spec.pip_install_options };
}

describe("hash-checked pip requirements, installed by real pip", () => {
  beforeAll(() => {
    const got = pip(["download", "--dest", wheels, "six==1.17.0", "requests==2.34.2"]);
    expect(got.status, got.stderr).toBe(0);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("installs a requirement whose wheel matches its hash, with --require-hashes", () => {
    const r = installAsRay([`six==1.17.0 --hash=sha256:${sha256Of("six")}`], "match");
    expect(r.options).toContain("--require-hashes");
    expect(r.status, r.output).toBe(0);
    expect(readdirSync(join(dir, "match"))).toContain("six.py");
  });

  it("refuses a wheel that does not match its hash, and installs nothing", () => {
    const wrong = sha256Of("six").replace(/^./, (c) => (c === "0" ? "1" : "0"));
    const r = installAsRay([`six==1.17.0 --hash=sha256:${wrong}`], "mismatch");
    expect(r.status).not.toBe(0);
    expect(r.output).toContain("THESE PACKAGES DO NOT MATCH THE HASHES");
  });

  it("refuses a dependency the list does not hash, rather than installing it unverified", () => {
    const r = installAsRay([`requests==2.34.2 --hash=sha256:${sha256Of("requests")}`], "unlisted");
    expect(r.status).not.toBe(0);
    // pip names the unhashed (or unpinned) dependency and stops before installing anything.
    expect(r.output).toMatch(/--require-hashes mode[\s\S]*charset.normalizer/i);
    expect(existsSync(join(dir, "unlisted", "requests"))).toBe(false);
  });

  it("installs an unhashed list as before, unverified (a dev job's)", () => {
    const r = installAsRay(["six==1.17.0"], "plain");
    expect(r.options).toEqual([]);
    expect(r.status, r.output).toBe(0);
  });
});
