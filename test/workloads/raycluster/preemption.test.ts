import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync, chmodSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NOTICE_DIR_ENV, NOTICE_FILES, noticeScript } from "../../../workloads/raycluster/preemption";

/** Runs the hook with `ray` stood in for by a script that records its arguments. */
function runHook(grace: number, setUp: (dir: string) => void) {
  const root = mkdtempSync(join(tmpdir(), "notice-"));
  const dir = join(root, "notice");
  const bin = join(root, "bin");
  mkdirSync(dir);
  mkdirSync(bin);
  writeFileSync(join(bin, "ray"), `#!/bin/sh\necho "$@" >> ${join(root, "calls")}\n`);
  chmodSync(join(bin, "ray"), 0o755);
  setUp(dir);
  const out = execFileSync("/bin/sh", ["-c", noticeScript(grace)], {
    env: { PATH: `${bin}:/usr/bin:/bin`, [NOTICE_DIR_ENV]: dir },
    encoding: "utf-8",
  });
  return { out, dir, calls: readFileSync(join(root, "calls"), "utf-8").trim() };
}

describe("the spot worker's preStop hook", () => {
  it("writes the notice with its deadline and stops Ray at once when no training worker runs", () => {
    const { out, dir, calls } = runHook(120, () => {});
    expect(readFileSync(join(dir, NOTICE_FILES.notice), "utf-8")).toMatch(/^\d{10,}\n$/); // epoch seconds
    expect([out, calls]).toEqual(["", "stop"]);
  });

  it("waits for the training worker's checkpoint before it stops Ray", () => {
    const { out, calls } = runHook(120, (dir) => {
      writeFileSync(join(dir, NOTICE_FILES.training), "1");
      writeFileSync(join(dir, NOTICE_FILES.checkpointed), "7");
    });
    expect(out).toMatch(/^ray-gpu preStop: checkpointed after 0 s/);
    expect(calls).toBe("stop");
  });

  it("gives up waiting before the grace period ends, and still stops Ray", () => {
    const { out, calls, dir } = runHook(17, (d) => writeFileSync(join(d, NOTICE_FILES.training), "1"));
    expect(out).toMatch(/no checkpoint within 2 s/);
    expect([calls, existsSync(join(dir, NOTICE_FILES.checkpointed))]).toEqual(["stop", false]);
  });

  it("agrees with the runtime on the folder's variable and file names", () => {
    const python = readFileSync(join(__dirname, "../../../runtime/ray_gpu/preemption.py"), "utf-8");
    expect(python).toContain(`NOTICE_DIR_ENV = "${NOTICE_DIR_ENV}"`);
    const files = Object.entries(NOTICE_FILES).map(([k, v]) => `"${k}": "${v}"`);
    expect(python).toContain(`NOTICE_FILES = {${files.join(", ")}}`);
  });
});
