/**
 * The package as a team gets it: `npm pack`, then installed into fresh consumer projects in a temporary folder, once
 * per peer set (the versions we develop with, and the lowest each peer range allows), and compiled and run under both
 * tsconfigs of `pulumi new typescript` (test/package/tsconfigs: nodenext since March 2026, commonjs/node before), each
 * on TypeScript 5.0 (the template's floor) and the newest 5.x: plain `tsc` type-checks it (no skipLibCheck, no
 * esModuleInterop), plain `node` runs it under Pulumi's mocks, and so does ts-node loaded the way the Pulumi CLI
 * loads a TypeScript program. An ES-module consumer runs too. The programs (test/package/consumer/) build a platform
 * and jobs and assert on the resources they register. Every TypeScript snippet of the README and docs/ is compiled
 * the same way, as pasted, and the complete ones run under the mocks exactly as Pulumi's testing guide writes them
 * (test/package/consumer/standard-mocks.js), so a team's own unit tests of a stack that uses us run.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";
import { HANG_GUARD_MS } from "../helpers/hang-guard";
import { docSnippets, writeSnippetProject } from "./snippets";

const execFileAsync = promisify(execFile);
/**
 * Runs a child process with its own hang guard. The guard is per child, not per test: a test here waits on up to a
 * dozen children (npm installs, tsc runs of programs that import the AWS provider's types), each a minute or more on a
 * machine loaded many times over, so each test's own limit is the guard times the children it waits on.
 */
const run = (command: string, args: string[], options: { cwd: string; maxBuffer?: number }) =>
  execFileAsync(command, args, { ...options, timeout: HANG_GUARD_MS, killSignal: "SIGKILL" });
/** A test's (or hook's) hang guard: one per child process it waits on, one after another. */
const guardFor = (children: number) => children * HANG_GUARD_MS;
const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  version: string;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const PEERS = Object.keys(pkg.peerDependencies);

/** The TypeScript versions a consumer may compile with: the template's floor and the newest 5.x (ours). */
const TYPESCRIPT = { floor: "5.0.4", newest: pkg.devDependencies["typescript"]! } as const;
type TypeScriptVersion = keyof typeof TYPESCRIPT;

/** A set of peer versions, and the TypeScript the project itself depends on (the one ts-node loads). */
interface PeerSet {
  readonly name: string;
  readonly peers: Readonly<Record<string, string>>;
  readonly projectTypeScript: TypeScriptVersion;
}
const PEER_SETS: readonly PeerSet[] = [
  {
    name: "current-peers",
    peers: Object.fromEntries(PEERS.map((p) => [p, pkg.devDependencies[p]!])),
    projectTypeScript: "newest",
  },
  {
    name: "lowest-peers",
    peers: Object.fromEntries(PEERS.map((p) => [p, pkg.peerDependencies[p]!.replace(/^\^/, "")])),
    projectTypeScript: "floor",
  },
];
/** The `pulumi new typescript` tsconfigs (test/package/tsconfigs). */
const TEMPLATES = ["nodenext", "commonjs"] as const;
type Template = (typeof TEMPLATES)[number];
const JOBS = ["embed-docs", "llama-ddp"];
/**
 * The docs' snippets: each template with the TypeScript its projects were made with (the old template on the floor,
 * the current one on the newest); the package itself is compiled on both versions under both templates above.
 */
const SNIPPET_RUNS: readonly { template: Template; typescript: TypeScriptVersion }[] = [
  { template: "commonjs", typescript: "floor" },
  { template: "nodenext", typescript: "newest" },
];

/**
 * The TypeScript each project is compiled with by plain tsc, which checks the package's declarations under the
 * template's settings as well as the program: every pair of peer set, template and version is compiled once (an
 * orthogonal array of the three), where all eight combinations took four more full checks of a program importing the
 * AWS provider's types, about a tenth of CI's CPU. ts-node then type-checks each program again, on the project's own
 * TypeScript, the way the Pulumi CLI loads it.
 */
const PLAIN_TSC: Readonly<Record<string, Readonly<Record<Template, TypeScriptVersion>>>> = {
  "current-peers": { nodenext: "newest", commonjs: "floor" },
  "lowest-peers": { nodenext: "floor", commonjs: "newest" },
};

let work = "";
let tarball = "";
/** Each peer set's installed node_modules. */
const installed = new Map<string, string>();

/**
 * One install per peer set: the peers, the tarball, @types/node as the template has it, and both TypeScript versions
 * (the project's as `typescript`, the other under an alias).
 */
async function install(set: PeerSet): Promise<string> {
  const dir = join(work, `${set.name}-install`);
  mkdirSync(dir);
  const other: TypeScriptVersion = set.projectTypeScript === "floor" ? "newest" : "floor";
  const manifest = {
    name: set.name,
    private: true,
    devDependencies: {
      "@types/node": "^18",
      typescript: TYPESCRIPT[set.projectTypeScript],
      [`typescript-${other}`]: `npm:typescript@${TYPESCRIPT[other]}`,
    },
    dependencies: { ...set.peers, "pulumi-ray-gpu": `file:${tarball}` },
  };
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: dir });
  return join(dir, "node_modules");
}

/** A consumer project: the fixture program, a template's tsconfig.json, the peer set's node_modules. */
function project(set: PeerSet, template: Template): string {
  const dir = join(work, `${set.name}-${template}`);
  cpSync(join(repoRoot, "test/package/consumer"), dir, { recursive: true });
  cpSync(join(repoRoot, "test/package/tsconfigs", `${template}.json`), join(dir, "tsconfig.json"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `${set.name}-${template}`, main: "index.ts" }));
  symlinkSync(installed.get(set.name)!, join(dir, "node_modules"), "dir");
  return dir;
}

/** The `tsc` of a TypeScript version, as installed for `set`. */
function tscOf(set: PeerSet, version: TypeScriptVersion): string {
  const name = version === set.projectTypeScript ? "typescript" : `typescript-${version}`;
  return join("node_modules", name, "bin", "tsc");
}

/** Runs a command in `cwd`; its output, trimmed. */
async function step(cwd: string, command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args, { cwd, maxBuffer: 16 * 2 ** 20 });
  return stdout.trim();
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "ray-gpu-consumers-"));
  // dist/ is built by the test setup; pack it as npm publishes it.
  await run("npm", ["pack", "--ignore-scripts", "--pack-destination", work, "--loglevel=error"], { cwd: repoRoot });
  tarball = join(work, `pulumi-ray-gpu-${pkg.version}.tgz`);
  const dirs = await Promise.all(PEER_SETS.map(install));
  PEER_SETS.forEach((set, i) => installed.set(set.name, dirs[i]!));
}, guardFor(2)); // the pack, then the installs side by side

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

  it.each(
    PEER_SETS.flatMap((set) => TEMPLATES.map((template) => ({ set, template, tsc: PLAIN_TSC[set.name]![template] }))),
  )(
    "compiles with plain tsc on TypeScript $tsc, runs under node, and under ts-node on its own TypeScript: $set.name, $template tsconfig",
    async ({ set, template, tsc }) => {
      const dir = project(set, template);
      expect(await step(dir, "node", [tscOf(set, tsc), "--version"])).toBe(`Version ${TYPESCRIPT[tsc]}`);
      await step(dir, "node", [tscOf(set, tsc), "-p", "."]);
      const compiled = JSON.parse(await step(dir, "node", ["run-mocks.js", "compiled"])) as { jobs: string[] };
      expect(compiled.jobs).toEqual(JOBS);
      const own = set.projectTypeScript;
      expect(await step(dir, "node", [tscOf(set, own), "--version"])).toBe(`Version ${TYPESCRIPT[own]}`);
      const tsNode = JSON.parse(await step(dir, "node", ["run-mocks.js", "ts-node"])) as { jobs: string[] };
      expect(tsNode.jobs).toEqual(JOBS);
    },
    guardFor(5), // two tsc --version, one tsc, two runs
  );

  it.each(SNIPPET_RUNS)(
    "compiles every TypeScript snippet of the README and docs/ as pasted ($template tsconfig, TypeScript " +
      "$typescript), and runs each complete one under Pulumi's standard mocks",
    async ({ template, typescript }) => {
      const set = PEER_SETS[0]!;
      const dir = join(work, `snippets-${template}`);
      mkdirSync(dir);
      writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `snippets-${template}` }));
      cpSync(join(repoRoot, "test/package/consumer/standard-mocks.js"), join(dir, "standard-mocks.js"));
      symlinkSync(installed.get(set.name)!, join(dir, "node_modules"), "dir");
      const snippets = writeSnippetProject(dir, template);
      expect(new Set(snippets.map((s) => s.source.split(":")[0]))).toEqual(new Set(["README.md", "docs/library.md"]));
      await step(dir, "node", [tscOf(set, typescript), "-p", "."]);
      for (const snippet of snippets.filter((s) => s.complete)) {
        const program = join("bin", snippet.file.replace(/\.ts$/, ".js"));
        const ran = await run("node", ["standard-mocks.js", program], { cwd: dir }).catch((e: { stderr?: string }) => ({
          stdout: "",
          failed: e.stderr ?? String(e),
        }));
        expect("failed" in ran ? ran.failed : "", snippet.source).toBe("");
        const registered = JSON.parse(ran.stdout) as { resources: number };
        expect(registered.resources, snippet.source).toBeGreaterThan(0);
      }
    },
    guardFor(1 + docSnippets().filter((s) => s.complete).length), // one tsc, then each complete snippet's run
  );

  it("installs each peer set at exactly its versions", async () => {
    for (const set of PEER_SETS) {
      const listed = JSON.parse(
        await step(join(work, `${set.name}-install`), "npm", ["ls", "--json", "--depth=0"]),
      ) as {
        dependencies: Record<string, { version: string }>;
      };
      for (const [p, v] of Object.entries(set.peers))
        expect(listed.dependencies[p]?.version, `${set.name}: ${p}`).toBe(v);
    }
  });

  it(
    "loads as an ES module, and its CLI runs from the project",
    async () => {
      const dir = join(work, "esm-consumer");
      cpSync(join(repoRoot, "test/package/consumer/esm"), dir, { recursive: true });
      symlinkSync(installed.get(PEER_SETS[0]!.name)!, join(dir, "node_modules"), "dir");
      const esm = JSON.parse(await step(dir, "node", ["index.mjs"])) as { kinds: string[] };
      expect(esm.kinds).toContain("RayJob");
      expect(await step(dir, "npx", ["ray-gpu", "--version"])).toBe(pkg.version);
    },
    guardFor(2),
  );

  it("publishes declarations that never import zod (its declarations need esModuleInterop or skipLibCheck)", async () => {
    const files = (await step(work, "tar", ["tzf", tarball])).split("\n").filter((f) => f.endsWith(".d.ts"));
    expect(files.length).toBeGreaterThan(50);
    const root = join(installed.get(PEER_SETS[0]!.name)!, "pulumi-ray-gpu");
    const importers = files.filter((f) =>
      /from "zod|import\("zod/.test(readFileSync(join(root, f.replace(/^package\//, "")), "utf8")),
    );
    expect(importers).toEqual([]);
  });
});
