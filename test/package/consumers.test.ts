/**
 * The package as a team gets it: `npm pack`, then installed into fresh consumer projects in a temporary folder.
 * (a) the `pulumi new typescript` layout and tsconfig: plain `tsc` type-checks it (no skipLibCheck), plain `node` runs
 *     it under Pulumi's mocks, and so does ts-node loaded the way the Pulumi CLI loads a TypeScript program;
 * (b) an ES-module consumer;
 * (c) a consumer on the lowest versions of our peer ranges.
 * The programs (test/package/consumer/) build a platform and jobs and assert on the resources they register.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  version: string;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const PEERS = Object.keys(pkg.peerDependencies);
/** The versions we develop with, and the lowest each peer range allows. */
const current = Object.fromEntries(PEERS.map((p) => [p, pkg.devDependencies[p]!]));
const lowest = Object.fromEntries(PEERS.map((p) => [p, pkg.peerDependencies[p]!.replace(/^\^/, "")]));

let work = "";
let tarball = "";

/** A consumer project in its own folder: the fixture program, the tarball and the given peer versions installed. */
async function consumer(name: string, peers: Record<string, string>): Promise<string> {
  const dir = join(work, name);
  cpSync(join(repoRoot, "test/package/consumer"), dir, { recursive: true });
  const manifest = {
    name,
    main: "index.ts",
    devDependencies: { "@types/node": "^18", typescript: "^5.0.0" },
    dependencies: { ...peers, "pulumi-ray-gpu": `file:${tarball}` },
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir });
  return dir;
}

/** Runs a command in `cwd`; its output, parsed when it is the JSON summary line the runners print. */
async function step(cwd: string, command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args, { cwd, maxBuffer: 16 * 2 ** 20 });
  return stdout.trim();
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "ray-gpu-consumers-"));
  // dist/ is built by the test setup; pack it as npm publishes it.
  await run("npm", ["pack", "--ignore-scripts", "--pack-destination", work, "--loglevel=error"], { cwd: repoRoot });
  tarball = join(work, `pulumi-ray-gpu-${pkg.version}.tgz`);
}, 120_000);

describe("the packed package", () => {
  it("holds the compiled library, its types, the CLI and the Python runtime; no tests, no TypeScript sources", async () => {
    const files = (await step(work, "tar", ["tzf", tarball])).split("\n").map((f) => f.replace(/^package\//, ""));
    for (const f of ["dist/index.js", "dist/index.d.ts", "dist/cli/main.js", "bin/ray-gpu.js", "LICENSE", "README.md"])
      expect(files).toContain(f);
    for (const f of [
      "runtime/ray_gpu/__init__.py",
      "runtime/ray_gpu/tuning.schema.json",
      "runtime/ray_gpu/examples/train.py",
    ])
      expect(files).toContain(f);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    expect(files.filter((f) => /(^|\/)(test|tests|__snapshots__|e2e)\//.test(f) || f.includes("__pycache__"))).toEqual(
      [],
    );
  });

  it("(a, b) loads in a `pulumi new typescript` project: tsc, node, ts-node as the Pulumi CLI runs it, and as an ES module", async () => {
    const dir = await consumer("typescript-project", current);
    await step(dir, "npx", ["tsc", "-p", "."]);
    const compiled = JSON.parse(await step(dir, "node", ["run-mocks.js", "compiled"])) as { jobs: string[] };
    expect(compiled.jobs).toEqual(["embed-docs", "llama-ddp"]);
    const tsNode = JSON.parse(await step(dir, "node", ["run-mocks.js", "ts-node"])) as { jobs: string[] };
    expect(tsNode.jobs).toEqual(["embed-docs", "llama-ddp"]);
    const esm = JSON.parse(await step(join(dir, "esm"), "node", ["index.mjs"])) as { kinds: string[] };
    expect(esm.kinds).toContain("RayJob");
    expect(await step(dir, "npx", ["ray-gpu", "--version"])).toBe(pkg.version);
  }, 600_000);

  it(`(c) works on the lowest versions of its peer ranges (${Object.entries(lowest)
    .map(([p, v]) => `${p}@${v}`)
    .join(", ")})`, async () => {
    const dir = await consumer("lowest-peers", lowest);
    const installed = JSON.parse(await step(dir, "npm", ["ls", "--json", "--depth=0"])) as {
      dependencies: Record<string, { version: string }>;
    };
    for (const [p, v] of Object.entries(lowest)) expect(installed.dependencies[p]?.version, p).toBe(v);
    await step(dir, "npx", ["tsc", "-p", "."]);
    const compiled = JSON.parse(await step(dir, "node", ["run-mocks.js", "compiled"])) as { jobs: string[] };
    expect(compiled.jobs).toEqual(["embed-docs", "llama-ddp"]);
  }, 600_000);
});
