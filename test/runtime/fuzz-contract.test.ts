/**
 * The Python contract loader under fuzz, in `npm test`: `runtime/tests/fuzz_contract.py` (standard library only) feeds it
 * hundreds of malformed tuning documents from a fixed seed and fails on any exception other than `TuningError` with a
 * path, or a hang. Skipped, with the reason, when no Python 3.11+ is on the PATH (CI installs it).
 */
import { execFile, spawnSync } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";
import { HANG_GUARD_MS } from "../helpers/hang-guard";

const python = process.env["PYTHON"] ?? "python3";
const probe = spawnSync(python, ["-c", "import sys; print(sys.version_info >= (3, 11))"], { encoding: "utf8" });
const missing = probe.status !== 0 ? `${python} not found` : probe.stdout.trim() !== "True" ? `${python} is older than 3.11` : "";
if (missing) console.warn(`[fuzz-contract] skipped: ${missing}`);

describe.skipIf(missing !== "")(`Python contract loader fuzz${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("turns every malformed document into TuningError with a path: 500 inputs, two seeds", async () => {
    const run = promisify(execFile);
    for (const seed of ["1", "2"]) {
      const { stdout } = await run(python, [join(repoRoot, "runtime/tests/fuzz_contract.py"), "--seed", seed, "--count", "500"], {
        cwd: repoRoot,
        timeout: HANG_GUARD_MS,
      });
      console.log(stdout.trim());
      expect(stdout).toMatch(/fuzz_contract: 500 inputs, .* 0 other exceptions, 0 without a path, 0 hangs/);
    }
  });
});
