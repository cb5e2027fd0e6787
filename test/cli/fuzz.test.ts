/**
 * Fuzz: hundreds of malformed inputs through the real CLI entry (`main`, in-process), from a fixed seed. Each must end
 * with exit 0 (a mutation that is still valid), 1 (invalid input, with the config path or file named) or 2 (usage),
 * never a thrown error or a stack trace, never hang, and never touch anything outside the output folder. The counts are
 * printed. The time limit per input is a hang detector only (generous, so a slow machine cannot fail it).
 */
import fc from "fast-check";
import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parse, stringify } from "yaml";
import { messageFlaws } from "../helpers/messages";
import { describe, expect, it } from "vitest";
import { main } from "../../cli/main";
import { repoRoot } from "../helpers/fixtures";
import { runCli } from "../helpers/run-cli";

const SEED = 20261201;
/** An input that runs longer counts as a hang (a guard: one takes well under a second on a quiet machine). */
const HANG_MS = 120_000;
/** A line of a JavaScript stack trace. */
const TRACE = /\n\s+at .+[:(]\d+:\d+\)?/;
/** An issue line of a ConfigError: `✖ <path>: <message>`. */
const ISSUE = /✖ \S.*: /;

type Json = unknown;
type Path = (string | number)[];

const devConfig = parse(readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8")) as Record<string, Json>;

/** Every path into the dev stack's config (objects and arrays too, not only leaves). */
function pathsOf(value: Json, prefix: Path = []): Path[] {
  if (value === null || typeof value !== "object") return [prefix];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
  return [prefix, ...entries.flatMap(([k, v]) => pathsOf(v, [...prefix, k]))];
}
const PATHS = pathsOf(devConfig).filter((p) => p.length > 1);

/** Values that have broken tools before, and plain random ones. */
const badValue: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(NaN, Infinity, -Infinity, -1, 0, 1e308, 2 ** 53 + 1, 0.5, null, true, "", " ", "🙂", "../.."),
  fc.constantFrom("xx-nowhere-9", "1.99", "999.1.2.3/16", "10.0.0.1/8", "192.168.5.4", "kube-system", "g5.99xlarge"),
  fc.integer({ min: -1e9, max: 1e9 }),
  fc.double(),
  fc.string({ maxLength: 30 }),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.integer(), { maxKeys: 3 }),
);

type Mutation =
  | { op: "set"; path: Path; value: Json }
  | { op: "delete"; path: Path }
  | { op: "add"; path: Path; key: string; value: Json };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("set" as const), path: fc.constantFrom(...PATHS), value: badValue }),
  fc.record({ op: fc.constant("delete" as const), path: fc.constantFrom(...PATHS) }),
  fc.record({
    op: fc.constant("add" as const),
    path: fc.constantFrom(...PATHS),
    key: fc.string({ minLength: 1, maxLength: 12 }),
    value: badValue,
  }),
);

function apply(doc: Json, m: Mutation): Json {
  const copy = structuredClone(doc) as Record<string | number, Json>;
  const parentPath = m.op === "add" ? m.path : m.path.slice(0, -1);
  let parent: Json = copy;
  for (const seg of parentPath) parent = (parent as Record<string | number, Json>)?.[seg];
  if (parent === null || typeof parent !== "object") return copy;
  const target = parent as Record<string | number, Json>;
  if (m.op === "add") target[m.key] = m.value;
  else if (m.op === "set") target[m.path.at(-1)!] = m.value;
  else if (Array.isArray(target)) target.splice(Number(m.path.at(-1)), 1);
  else delete target[m.path.at(-1)!];
  return copy;
}

const devText = readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8");

/** Text-level damage the object mutations cannot make: truncation, bad bytes, duplicate keys, aliases, nesting. */
const rawText: fc.Arbitrary<Buffer> = fc.oneof(
  fc.nat({ max: devText.length }).map((n) => Buffer.from(devText.slice(0, n))),
  fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b)),
  fc.nat({ max: devText.split("\n").length - 1 }).map((i) => {
    const lines = devText.split("\n");
    return Buffer.from([...lines.slice(0, i + 1), lines[i]!, ...lines.slice(i + 1)].join("\n"));
  }),
  fc.integer({ min: 2, max: 12 }).map((n) => {
    const rows = ["config:", "  a0: &a0 [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < n; i++)
      rows.push(
        `  a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(", ")}]`,
      );
    return Buffer.from([...rows, `  ray-gpu:region: *a${n - 1}`].join("\n"));
  }),
  fc
    .integer({ min: 10, max: 3000 })
    .map((d) => Buffer.from(`config:\n  ray-gpu:region: ${"[".repeat(d)}${"]".repeat(d)}\n`)),
  fc
    .nat({ max: devText.length })
    .map((n) => Buffer.concat([Buffer.from(devText.slice(0, n)), Buffer.from([0xff, 0xfe, 0x00])])),
);

/** Files and folders under `root`, with size and kind: what "nothing outside the output folder touched" compares. */
function snapshot(root: string, skip: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      if (full === skip) continue;
      const st = lstatSync(full);
      out.push(`${relative(root, full)} ${st.isDirectory() ? "dir" : st.size}`);
      if (st.isDirectory()) walk(full);
    }
  };
  walk(root);
  return out;
}

interface Tally {
  inputs: number;
  codes: Record<string, number>;
  traces: number;
  hangs: number;
  unnamed: number;
}

const tally: Tally = { inputs: 0, codes: {}, traces: 0, hangs: 0, unnamed: 0 };

type Outcome = { code: number | "hang" | "threw"; err: string };

/** Runs `main` in this process; a timer flags an asynchronous hang (a blocking read would stop the timer too). */
async function inProcess(argv: string[], cwd: string): Promise<Outcome> {
  let err = "";
  const io = { out: () => undefined, err: (s: string) => void (err += s), cwd };
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<"hang">((res) => (timer = setTimeout(() => res("hang"), HANG_MS)));
  try {
    return { code: await Promise.race([main(argv, io), hang]), err };
  } catch (e) {
    return { code: "threw", err: err + String(e instanceof Error ? e.stack : e) };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the real binary in a child process killed after {@link HANG_MS}: a blocking read shows as a hang. */
async function inChild(argv: string[], cwd: string): Promise<Outcome> {
  const r = await runCli(argv, {}, { cwd, timeoutMs: HANG_MS });
  return { code: r.signal !== null ? "hang" : (r.status ?? "threw"), err: r.stderr };
}

/** Runs the CLI once and checks the rules; returns a description of a broken rule, or undefined. */
async function check(
  argv: string[],
  cwd: string,
  outDir: string,
  run: (argv: string[], cwd: string) => Promise<Outcome> = inProcess,
): Promise<string | undefined> {
  const before = snapshot(cwd, outDir);
  const { code, err } = await run(argv, cwd);
  tally.inputs++;
  tally.codes[String(code)] = (tally.codes[String(code)] ?? 0) + 1;
  if (code === "hang") return (tally.hangs++, "hang");
  if (TRACE.test(err)) return (tally.traces++, `stack trace: ${err.slice(0, 300)}`);
  if (code === 1 && !ISSUE.test(err)) return (tally.unnamed++, `exit 1 without a path: ${err.slice(0, 300)}`);
  if (code !== 0 && code !== 1 && code !== 2) return `exit ${code}: ${err.slice(0, 300)}`;
  const flaws = messageFlaws(err);
  if (flaws.length > 0) return `a message that reads badly: ${flaws.join(" | ").slice(0, 300)}`;
  if (snapshot(cwd, outDir).join("\n") !== before.join("\n")) return "touched files outside the output folder";
  return undefined;
}

/** Things in the project folder that arguments may point at: a FIFO, a link loop, a folder, a file in a bad encoding. */
const TRAPS = ["pipe", "loop", "adir", "latin1.yaml", "w.yaml"] as const;

function project(): { dir: string; out: string } {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-fuzz-"));
  writeFileSync(join(dir, "Pulumi.yaml"), readFileSync(join(repoRoot, "Pulumi.yaml")));
  mkdirSync(join(dir, "out"));
  execFileSync("mkfifo", [join(dir, "pipe")]);
  symlinkSync("loop", join(dir, "loop"));
  mkdirSync(join(dir, "adir"));
  writeFileSync(join(dir, "latin1.yaml"), Buffer.from("kind: TrainingJob\nname: caf\xe9\n", "latin1"));
  writeFileSync(join(dir, "w.yaml"), "kind: TrainingJob\nname: w\nmodel: meta-llama/Llama-3.2-1B\ngpus: 4\n");
  return { dir, out: join(dir, "out", "rendered") };
}

/** Paths every path option is tried with. */
const TRAP_PATHS = [
  ...TRAPS,
  "/",
  "/proc",
  "/etc/passwd",
  "/etc/passwd/x",
  "pipe/x",
  "loop/x",
  "Pulumi.yaml/x",
  "\u0000x",
  "a".repeat(300),
  "..",
];

const COMMANDS: string[][] = [
  ["plan", "--stack", "fuzz"],
  ["plan", "--stack", "fuzz", "--json"],
  ["render", "--stack", "fuzz", "--out"],
];

describe("fuzz: malformed input never crashes the CLI", () => {
  const { dir, out } = project();

  it("mutated stack configs (200 inputs)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.nat({ max: 2 }), async (ms, c) => {
        const doc = ms.reduce(apply, devConfig as Json);
        writeFileSync(join(dir, "Pulumi.fuzz.yaml"), stringify(doc));
        const argv = [...COMMANDS[c]!, ...(c === 2 ? [out] : [])];
        const broken = await check(["-C", dir, ...argv], dir, join(dir, "out"));
        expect(broken, JSON.stringify(ms).slice(0, 500)).toBeUndefined();
      }),
      { seed: SEED, numRuns: 200, endOnFailure: true },
    );
  });

  it("damaged text (120 inputs)", async () => {
    await fc.assert(
      fc.asyncProperty(rawText, fc.nat({ max: 2 }), async (bytes, c) => {
        writeFileSync(join(dir, "Pulumi.fuzz.yaml"), bytes);
        const argv = [...COMMANDS[c]!, ...(c === 2 ? [out] : [])];
        const broken = await check(["-C", dir, ...argv], dir, join(dir, "out"));
        expect(broken, bytes.toString("latin1").slice(0, 300)).toBeUndefined();
      }),
      { seed: SEED, numRuns: 120, endOnFailure: true },
    );
  });

  it("hostile arguments and paths (80 inputs)", async () => {
    writeFileSync(join(dir, "Pulumi.fuzz.yaml"), devText);
    const arg = fc.oneof(
      fc.constantFrom("-C", "--stack", "--out", "--workload", "--json", "--env", "--force", "plan", "render", "--"),
      fc.constantFrom("/", "/proc", "/dev/null", "/etc/passwd", "..", "fuzz", "", "out/x", "Pulumi.yaml", "\u0000"),
      fc.constantFrom(
        ...TRAPS,
        "/etc/passwd/x",
        "Pulumi.yaml/x",
        "loop/x",
        "pipe/x",
        "out/x/../../..",
        "a".repeat(300),
      ),
      fc.constantFrom(...TRAPS).map((t) => ["--workload", t]),
      fc.constantFrom(...TRAPS, "/etc/passwd/x", "pipe/x", "a".repeat(300)).map((t) => ["--out", t]),
      fc.constantFrom(...TRAPS, "/etc/passwd", "loop/x").map((t) => ["-C", t]),
      fc.string({ maxLength: 12 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom("plan", "render"), fc.array(arg, { maxLength: 6 }), async (cmd, args) => {
        const rest = args.flat();
        // Relative paths resolve against the process folder: run inside the project, and compare everything in it
        // but the folder `--out` names (a render may create it, inside the project).
        // A working base first (commander keeps the last value of an option), so the hostile part gets that far.
        const base = cmd === "render" ? ["--stack", "fuzz", "--out", "out/r"] : ["--stack", "fuzz"];
        const argv = [cmd, "-C", dir, ...base, ...rest];
        const outArg = argv.lastIndexOf("--out");
        const cwd = process.cwd();
        process.chdir(dir);
        try {
          const target = outArg >= 0 && argv[outArg + 1] ? resolve(dir, argv[outArg + 1]!) : join(dir, "out");
          expect(await check(argv, dir, target), argv.join(" ")).toBeUndefined();
        } finally {
          process.chdir(cwd);
        }
      }),
      { seed: SEED, numRuns: 80, endOnFailure: true },
    );
  });

  it("every trap path in every path option, each in a child process (a blocking read would show as a hang)", async () => {
    writeFileSync(join(dir, "Pulumi.fuzz.yaml"), devText);
    const cases = TRAP_PATHS.flatMap((p) => [
      ["plan", "-C", p, "--stack", "fuzz"],
      ["plan", "-C", dir, "--workload", p],
      ["plan", "-C", dir, "--stack", "fuzz", "--workload", p],
      ["render", "-C", dir, "--stack", "fuzz", "--out", p],
      ["render", "-C", dir, "--stack", "fuzz", "--out", p, "--force"],
    ]);
    for (const argv of cases) {
      const target = argv[5] === "--out" ? resolve(dir, argv[6]!) : join(dir, "out");
      // A process cannot be given an argument holding a NUL byte: that one runs in this process.
      const run = argv.some((a) => a.includes("\u0000")) ? inProcess : inChild;
      expect(await check(argv, dir, target, run), argv.join(" ")).toBeUndefined();
    }
  });

  it("prints the counts", () => {
    const codes = Object.entries(tally.codes)
      .sort()
      .map(([c, n]) => `exit ${c}: ${n}`)
      .join(", ");
    console.log(
      `fuzz: ${tally.inputs} inputs tried; ${codes}; traces = ${tally.traces}; hangs = ${tally.hangs}; ` +
        `exit 1 without a path = ${tally.unnamed}`,
    );
    expect(tally.inputs).toBe(400 + TRAP_PATHS.length * 5);
    expect(tally.traces + tally.hangs + tally.unnamed).toBe(0);
  });
});
