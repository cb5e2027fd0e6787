/**
 * The `ray-gpu` command: plan, render and preview stacks offline, without cloud credentials or the Pulumi CLI.
 * Exit codes: 0 ok, 1 invalid input (every problem listed), 2 usage error.
 */
import { Command, CommanderError } from "commander";
import { ConfigError } from "../core/errors";
import { packageVersion } from "../io/package-info";
import { registerPlan } from "./plan/command";
import { registerDiff } from "./diff/command";
import { registerPreview } from "./preview/command";
import { registerRender } from "./render/command";
import { registerReport } from "./report/command";
import { registerTune } from "./tune/command";
import { describeErrno, isErrnoError } from "./input/file";
import { terminalSafe } from "./output/terminal-text";
import { defaultIo, EXIT, UsageError, type CommandContext, type Io } from "./io";

export { EXIT, UsageError, type Io } from "./io";

/** The program with every command. */
function build(io: Io, setCode: (c: number) => void): Command {
  const program = new Command("ray-gpu")
    .description(
      "Plan and render Ray-on-A10G stacks offline: node pools, tuned KubeRay RayJobs and the reason for every value.",
    )
    .version(packageVersion(), "-V, --version", "print the version of pulumi-ray-gpu")
    .option("-C, --dir <dir>", "folder with Pulumi.yaml and the Pulumi.<stack>.yaml files", io.cwd)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError("(run with --help for usage)");
  const ctx: CommandContext = { io, setCode, dir: () => program.opts<{ dir: string }>().dir };
  registerPlan(program, ctx);
  registerRender(program, ctx);
  registerPreview(program, ctx);
  registerDiff(program, ctx);
  registerReport(program, ctx);
  registerTune(program, ctx);
  program.hook("preAction", () => setCode(EXIT.ok));
  return program;
}

/** `io` with everything written through it made safe for a terminal ({@link terminalSafe}). */
function safeIo(io: Io): Io {
  const { progress } = io;
  return {
    ...io,
    out: (s) => io.out(terminalSafe(s)),
    err: (s) => io.err(terminalSafe(s)),
    ...(progress ? { progress: (s: string) => progress(terminalSafe(s)) } : {}),
  };
}

/**
 * Runs the CLI with `argv` (without `node` and the script) and returns the exit code. Whatever it prints passes
 * {@link terminalSafe}: a control character from a file, a server or an argument is shown, never acted on.
 */
export async function main(argv: readonly string[], rawIo: Io = defaultIo()): Promise<number> {
  const io = safeIo(rawIo);
  let code: number = EXIT.ok;
  const program = build(io, (c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit 0; everything else commander rejects is a usage error.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof UsageError) {
      io.err(`ray-gpu: ${err.message}\n(run with --help for usage)\n`);
      return EXIT.usage;
    }
    if (err instanceof ConfigError) {
      io.err(`ray-gpu: invalid input\n${err.message}\n`);
      return EXIT.invalidInput;
    }
    if (isErrnoError(err)) {
      // A file-system problem the checks before did not foresee: still the path and the reason, never a trace.
      io.err(`ray-gpu: ${describeErrno(err)}\n`);
      return EXIT.usage;
    }
    throw err;
  }
}
