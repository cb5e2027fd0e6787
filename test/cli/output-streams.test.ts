/**
 * Standard output or error that cannot be written ends the CLI with one line and exit 74 (EX_IOERR), never a Node
 * stack trace: a full device (`> /dev/full`) and a pipe whose reader left (`| true`, before the CLI wrote).
 */
import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../cli/io";
import { repoRoot } from "../helpers/fixtures";
import { HANG_GUARD_MS } from "../helpers/hang-guard";

/** `command` run by bash with `stdout` as its standard output; its exit code and standard error. */
function run(command: string, stdout: "pipe" | number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], {
      cwd: repoRoot,
      stdio: ["ignore", stdout, "pipe"],
      timeout: HANG_GUARD_MS,
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

const cli = `"${process.execPath}" "${join(repoRoot, "bin/ray-gpu.js")}"`;

describe("the CLI's standard streams", () => {
  it("says in one line that a full device took standard output, and exits 74", async () => {
    const full = openSync("/dev/full", "w");
    try {
      const r = await run(`${cli} plan --stack prod`, full);
      expect(r.code).toBe(EXIT.outputFailed);
      expect(r.stderr).toBe("ray-gpu: cannot write standard output (ENOSPC); the output is incomplete\n");
    } finally {
      closeSync(full);
    }
  });

  it("exits 74 with one line when the reader of its pipe left (prod's plan JSON is larger than a pipe holds)", async () => {
    // `true` exits without reading: the 64 KiB the pipe holds fill up, and the next write meets EPIPE.
    const r = await run(`${cli} plan --stack prod --json | true; exit "\${PIPESTATUS[0]}"`, "pipe");
    expect(r.code).toBe(EXIT.outputFailed);
    expect(r.stderr).toBe("ray-gpu: cannot write standard output (EPIPE); the output is incomplete\n");
  });
});
