/**
 * What each command loads: the CLI is one bundle (scripts/bundle-cli.mjs) and the Pulumi SDK is loaded only by
 * `preview`. Observed on the real binary through a preload that lists the packages read from node_modules. And what V8
 * did with the bundle's code cache, which the build makes under the flags bin/ray-gpu.js sets.
 */
import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";
import { HANG_GUARD_MS } from "../helpers/hang-guard";

/** The npm packages `ray-gpu ...args` loads from node_modules, and its exit code. */
function loadedPackages(args: readonly string[]): Promise<{ status: number | null; packages: string[] }> {
  const preload = join(repoRoot, "test/helpers/loaded-packages.cjs");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--require", preload, join(repoRoot, "bin/ray-gpu.js"), ...args], {
      cwd: repoRoot,
    });
    let stderr = "";
    child.stdout.resume();
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (status) => {
      const line = /LOADED_PACKAGES (.*)/.exec(stderr)?.[1];
      if (line === undefined) reject(new Error(`no LOADED_PACKAGES line in: ${stderr}`));
      else resolve({ status, packages: JSON.parse(line) as string[] });
    });
  });
}

describe("ray-gpu startup", () => {
  it.each([["--help"], ["--version"], ["plan", "--stack", "prod"]])(
    "%s loads no package from node_modules: zod, yaml and commander are in the bundle, Pulumi is not needed",
    async (...args) => {
      const r = await loadedPackages(args);
      expect(r.status).toBe(0);
      expect(r.packages).toEqual([]);
    },
  );

  it("preview loads the Pulumi SDK and providers, from node_modules", async () => {
    const r = await loadedPackages(["preview", "--stack", "dev"]);
    expect(r.status).toBe(0);
    expect(r.packages).toEqual(expect.arrayContaining(["@pulumi/pulumi", "@pulumi/aws", "@pulumi/kubernetes"]));
  });

  it("compiles the bundle from the code cache the build made, under the flags the binary sets; others reject it", () => {
    const status = (nodeFlags: readonly string[]) =>
      spawnSync(process.execPath, [...nodeFlags, join(repoRoot, "bin/ray-gpu.js"), "plan", "--stack", "dev"], {
        cwd: repoRoot,
        encoding: "utf8",
        env: { ...process.env, RAY_GPU_CODE_CACHE_STATUS: "1" },
        timeout: HANG_GUARD_MS,
      }).stderr;
    expect(status([])).toContain("ray-gpu: code cache accepted");
    // A tiering budget given on node's command line is kept, and V8 then rejects a cache made under the binary's own.
    expect(status(["--interrupt-budget=67584"])).toContain("ray-gpu: code cache rejected");
  });
});
