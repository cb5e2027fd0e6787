/**
 * Benchmark (not a test): the `ray-gpu` CLI as a user runs it (compiled; `npm run bench` builds first), through `npx`
 * and as plain node, and the YAML reader on large and hostile stack files. Whole processes, medians over repeated runs;
 * prints Markdown tables. `render` against cdk8s is bench/render.bench.ts (`npm run bench:render`).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { costRounds, loadAverages, machineDescription, table, timeCommand, userEnv } from "./measure";

const root = resolve(__dirname, "..");
const cli = join(root, "bin/ray-gpu.js");
const work = mkdtempSync(join(tmpdir(), "ray-gpu-bench-"));
const RUNS = Number(process.env["BENCH_RUNS"] ?? 7);

/**
 * The CLI's commands on the repository's stacks, started as the README has users type them (`npx ray-gpu`, here in the
 * repository) and as plain `node bin/ray-gpu.js`, in rounds: median CPU seconds (user + system, npm and all it starts)
 * of each, the median per-round ratio, and median wall seconds. bench/startup.bench.ts compares every way to start it.
 */
function cliCommands(): string[][] {
  const commands: [string, string[]][] = [
    ["--help", ["--help"]],
    ["--version", ["--version"]],
    ["plan --workload", ["plan", "--workload", join(root, "examples/workloads/lora-llama-3.1-8b.yaml")]],
    ["plan --stack prod", ["-C", root, "plan", "--stack", "prod"]],
    ["render --stack prod", ["-C", root, "render", "--stack", "prod", "--out", join(work, "render-prod")]],
    ["preview --stack prod", ["-C", root, "preview", "--stack", "prod"]],
  ];
  const options = { cwd: root, env: userEnv() };
  return commands.map(([label, args]) => {
    const [node, npx] = costRounds(
      [
        { run: [process.execPath, [cli, ...args]], options },
        { run: ["npx", ["ray-gpu", ...args]], options },
      ],
      RUNS,
    );
    const s = (x: number) => x.toFixed(3);
    const ratio = npx!.cpuRatio.toFixed(2);
    return [`\`ray-gpu ${label}\``, s(npx!.cpuS), s(node!.cpuS), ratio, s(npx!.wallS), s(node!.wallS)];
  });
}

/**
 * `plan` of a stack file whose `config:` also holds n keys of another namespace (read, then ignored): the YAML parse and
 * duplicate-key check must grow linearly (the parser's pairwise check took 4.9 s at 16,000 keys).
 */
function yamlScaling(): string[][] {
  const dev = readFileSync(join(root, "Pulumi.dev.yaml"), "utf8");
  let previous: number | undefined;
  return [5_000, 10_000, 20_000, 40_000].map((n) => {
    const extra = Array.from({ length: n }, (_, i) => `  other:key${i}: value-${i}\n`).join("");
    const text = dev.replace("config:\n", `config:\n${extra}`);
    writeFileSync(join(work, `Pulumi.keys-${n}.yaml`), text);
    const t = timeCommand([process.execPath, [cli, "-C", work, "plan", "--stack", `keys-${n}`]], RUNS);
    const growth = previous === undefined ? "-" : (t / previous).toFixed(2);
    previous = t;
    return [String(n), (Buffer.byteLength(text) / 1e6).toFixed(2), t.toFixed(3), growth];
  });
}

/**
 * `plan` of hostile stack files that must be refused in time linear in their size: a 4 MB unknown model name and
 * 4,000 unknown 1,000-character keys ("did you mean" once measured the edit distance of each against every name:
 * 57 s and 27 s of CPU).
 */
function hostileInputs(): string[][] {
  const dev = readFileSync(join(root, "Pulumi.dev.yaml"), "utf8");
  const cases = {
    "4 MB unknown model name": dev.replace(/model: \S+/, `model: ${"x".repeat(4_000_000)}`),
    "4,000 unknown 1,000-character keys": dev.replace(
      /(- kind: \S+\n)/,
      (m) =>
        m +
        Array.from({ length: 4000 }, (_, i) => `      ${"k".repeat(996)}${String(i).padStart(4, "0")}: 1\n`).join(""),
    ),
  };
  return Object.entries(cases).map(([name, text], i) => {
    writeFileSync(join(work, `Pulumi.hostile-${i}.yaml`), text);
    const t = timeCommand([process.execPath, [cli, "-C", work, "plan", "--stack", `hostile-${i}`]], 3, [1]);
    return [name, (Buffer.byteLength(text) / 1e6).toFixed(2), t.toFixed(3)];
  });
}

console.log(
  `ray-gpu benchmarks, ${new Date().toISOString().slice(0, 10)} on ${machineDescription()}, load average ${loadAverages()}: ` +
    `medians of ${RUNS} runs of whole processes (wall time, but CPU time for the commands; alternating runs, each ` +
    `ratio the median of per-pair ratios)\n`,
);
const sections = new Set((process.env["BENCH_SECTIONS"] ?? "cli,yaml,hostile").split(","));
try {
  if (sections.has("hostile")) {
    console.log(table(["refused input", "file MB", "plan s (refused, exit 1)"], hostileInputs()));
    console.log();
  }
  if (sections.has("yaml")) {
    console.log(table(["extra keys", "file MB", "plan s", "× previous"], yamlScaling()));
    console.log();
  }
  if (sections.has("cli")) {
    const header = [
      "command",
      "`npx ray-gpu` CPU s",
      "`node bin/ray-gpu.js` CPU s",
      "npx / node",
      "npx wall s",
      "node wall s",
    ];
    console.log(table(header, cliCommands()));
    console.log();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
