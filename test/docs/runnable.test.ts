/**
 * Every shell block marked `runnable` in the README and docs/ (```sh runnable) runs as written, from the repository
 * root, and exits 0: the commands users copy keep working. Blocks without the mark need the cloud or the Pulumi CLI.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";
import { HANG_GUARD_MS } from "../helpers/hang-guard";
import { codeBlocks, pages } from "./markdown";

const runnable = pages().flatMap((page) =>
  codeBlocks(page).filter((b) => b.info[0] === "sh" && b.info.includes("runnable")),
);

describe("runnable shell blocks in the docs", () => {
  it("exist in the README and the deploy, CLI and runtime pages", () => {
    const where = new Set(runnable.map((b) => b.page));
    for (const page of ["README.md", "docs/deploy.md", "docs/cli.md", "docs/runtime.md"])
      expect(where, page).toContain(page);
  });

  it.each(runnable.map((b) => [`${b.page}:${b.line}`, b] as const))("%s runs and exits 0", async (_where, block) => {
    // bash -e: the block fails at its first failing command; pipefail: also inside a pipe. Asynchronous, so the
    // test worker keeps answering vitest while the commands run.
    const run = promisify(execFile)("bash", ["-e", "-o", "pipefail", "-c", block.body], {
      cwd: repoRoot,
      timeout: HANG_GUARD_MS,
    });
    await expect(run).resolves.toBeDefined();
  });
});
