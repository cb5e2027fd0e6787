/**
 * Benchmark (not a test): the CLI's start-up as users type it. `--version` and `plan --stack dev`, each run five ways in
 * rounds: `node bin/ray-gpu.js` (the baseline), and in a consumer project made from `npm pack` (created once per run
 * in a temporary folder, the peers at the versions we develop with) `./node_modules/.bin/ray-gpu`, `npx ray-gpu` and a
 * `package.json` script run by `npm run`; and `npx ray-gpu` in this repository, as the README's quick start has it.
 * Medians of CPU time (user + system of the process and all it starts) and of wall time; the CPU ratio to the baseline
 * is the median of per-round ratios. Then each first `npx` call, once: in the consumer right after its install, and
 * in this repository with an empty npm cache (a fresh clone's first call, which links the package into npm's npx
 * cache and so runs its `prepare` script). That call rebuilds dist/ here, as `npm run build` does.
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  costOnce,
  costRounds,
  loadAverages,
  machineDescription,
  table,
  userEnv,
  type Cost,
  type Variant,
} from "./measure";

const root = resolve(__dirname, "..");
const work = mkdtempSync(join(tmpdir(), "ray-gpu-startup-"));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 7);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** A user's shell; in this repository with an npm cache of its own, so its first `npx` call is a fresh clone's. */
const env = userEnv();
const repoEnv = userEnv({ npm_config_cache: join(work, "npm-cache") });

/** Exits with a message unless dist/ was built from the sources as they are (`npm run bench:startup` builds first). */
function requireBuilt(): void {
  const check = spawnSync(process.execPath, [join(root, "scripts/build-stamp.mjs"), "check"]);
  if (check.status === 0) return;
  console.error("startup.bench: dist/ is not built from these sources: run `npm run build` first");
  process.exit(1);
}

/** The package as `npm pack` makes it, installed with its peers into a new project; the install's cost. */
function consumerProject(dir: string): Cost {
  const npmQuiet = ["--loglevel=error", "--no-audit", "--no-fund"];
  costOnce(["npm", ["pack", "--ignore-scripts", "--pack-destination", work, ...npmQuiet]], { cwd: root, env });
  const peers = Object.keys(pkg.peerDependencies).map((p) => [p, pkg.devDependencies[p]!]);
  const manifest = {
    name: "startup-consumer",
    private: true,
    scripts: { "rg-version": "ray-gpu --version", "rg-plan": "ray-gpu plan --stack dev" },
    dependencies: { ...Object.fromEntries(peers), "pulumi-ray-gpu": `file:${work}/pulumi-ray-gpu-${pkg.version}.tgz` },
  };
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  copyFileSync(join(root, "Pulumi.dev.yaml"), join(dir, "Pulumi.dev.yaml"));
  return costOnce(["npm", ["install", "--prefer-offline", ...npmQuiet]], { cwd: dir, env });
}

/** The five ways to start the CLI with `args` (`script`: the consumer's `npm run` script of the same command). */
function ways(consumer: string, args: readonly string[], script: string): [string, Variant][] {
  const inConsumer = { cwd: consumer, env };
  return [
    [
      "`node bin/ray-gpu.js` (this repository)",
      { run: [process.execPath, ["bin/ray-gpu.js", ...args]], options: { cwd: root, env } },
    ],
    ["`./node_modules/.bin/ray-gpu` (consumer)", { run: ["./node_modules/.bin/ray-gpu", args], options: inConsumer }],
    ["`npx ray-gpu` (consumer)", { run: ["npx", ["ray-gpu", ...args]], options: inConsumer }],
    [`\`npm run ${script}\` (consumer)`, { run: ["npm", ["run", script]], options: inConsumer }],
    ["`npx ray-gpu` (this repository)", { run: ["npx", ["ray-gpu", ...args]], options: { cwd: root, env: repoEnv } }],
  ];
}

/** The table's rows of one command. */
function startupRows(consumer: string, args: readonly string[], script: string): string[][] {
  const variants = ways(consumer, args, script);
  const results = costRounds(
    variants.map(([, v]) => v),
    RUNS,
  );
  return variants.map(([how], i) => {
    const r = results[i]!;
    return [`\`${args.join(" ")}\``, how, r.cpuS.toFixed(3), r.cpuRatio.toFixed(2), r.wallS.toFixed(3)];
  });
}

/** A once-only row: its CPU and wall seconds. */
const onceRow = (what: string, c: Cost) => [what, c.cpuS.toFixed(3), c.wallS.toFixed(3)];

requireBuilt();
console.log(
  `ray-gpu start-up, ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}; load average ${loadAverages()}\n`,
);
try {
  const consumer = join(work, "consumer");
  const install = consumerProject(consumer);
  const firstInConsumer = costOnce(["npx", ["ray-gpu", "--version"]], { cwd: consumer, env });
  const firstInRepo = costOnce(["npx", ["ray-gpu", "--version"]], { cwd: root, env: repoEnv });
  console.log(
    table(
      ["once", "CPU s", "wall s"],
      [
        onceRow("`npm install` of the packed package and its peers (consumer)", install),
        onceRow("first `npx ray-gpu --version` after that install (consumer)", firstInConsumer),
        onceRow("first `npx ray-gpu --version` in this repository, empty npm cache (runs `prepare`)", firstInRepo),
      ],
    ),
  );
  console.log();
  const rows = [
    ...startupRows(consumer, ["--version"], "rg-version"),
    ...startupRows(consumer, ["plan", "--stack", "dev"], "rg-plan"),
  ];
  console.log(`Medians of ${RUNS} rounds (× node: median of per-round CPU ratios); load average ${loadAverages()}\n`);
  console.log(table(["command", "started by", "CPU s", "× node", "wall s"], rows));
} finally {
  rmSync(work, { recursive: true, force: true });
}
