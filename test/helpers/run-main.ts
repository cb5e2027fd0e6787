/** The CLI run in process (`main` with its output captured): faster than a child process, same exit codes. */
import { main } from "../../cli/main";
import { repoRoot } from "./fixtures";

/** `ray-gpu ...argv` in process, from `cwd` (default: the repository root): its exit code, stdout and stderr. */
export async function runMain(argv: readonly string[], cwd: string = repoRoot) {
  let out = "";
  let err = "";
  const code = await main([...argv], { out: (s) => (out += s), err: (s) => (err += s), cwd });
  return { code, out, err };
}
