/**
 * `ray-gpu diff`'s base fails closed: each way the trial found to make a prod stack count as new (so `--fail-on
 * replace` exits 0 on a bucket rename) is now an error or reads the real base.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { runMain } from "../../helpers/run-main";
import { platform, prod, repo } from "./fixture";

/** A repository whose working tree renames the prod bucket (a replacement) against its HEAD. */
function renamedBucket(): string {
  const head = prod();
  platform(head)["storage"] = { ...(platform(head)["storage"] as object), bucketName: "acme-ml-prod" };
  return repo(prod(), head);
}

const diffBase = (dir: string, base: string, ...args: string[]) =>
  runMain(["-C", dir, "diff", "--base", base, "--stack", "prod", "--no-preview", ...args], dir);

describe("diff's base fails closed", () => {
  it("reads a base stack file over 1 MiB at a git ref (the read failed and the stack counted as new)", async () => {
    const dir = renamedBucket();
    const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, stdio: "ignore" });
    const padded = `${stringify(prod())}# ${"x".repeat(1_200_000)}\n`;
    const head = execFileSync("cat", [join(dir, "Pulumi.prod.yaml")], { encoding: "utf8" });
    writeFileSync(join(dir, "Pulumi.prod.yaml"), padded);
    git("commit", "-qam", "padded base");
    writeFileSync(join(dir, "Pulumi.prod.yaml"), head);
    const r = await diffBase(dir, "HEAD");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    // the same workloads on both sides: nothing added (a stack counted as new adds all of them)
    expect(r.out.split("\n")[0]).toContain(" 0 added");
  });

  it("refuses a base stack file over the input limit at a ref instead of counting the stack as new", async () => {
    const dir = renamedBucket();
    const git = (...a: string[]) => execFileSync("git", a, { cwd: dir, stdio: "ignore" });
    const head = execFileSync("cat", [join(dir, "Pulumi.prod.yaml")], { encoding: "utf8" });
    writeFileSync(join(dir, "Pulumi.prod.yaml"), `${stringify(prod())}# ${"x".repeat(5 * 1024 * 1024)}\n`);
    git("commit", "-qam", "huge base");
    writeFileSync(join(dir, "Pulumi.prod.yaml"), head);
    const r = await diffBase(dir, "HEAD");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/base stack file HEAD:Pulumi\.prod\.yaml is \d+ bytes, over the 4 MiB input limit/);
  });

  it("refuses an empty base, the stacks' own folder, and a name that is both a folder and a ref", async () => {
    const dir = renamedBucket();
    expect((await diffBase(dir, "")).err).toContain("--base is empty");
    expect((await diffBase(dir, dir)).err).toContain("is the stacks' own folder");
    execFileSync("git", ["branch", "basefolder"], { cwd: dir });
    mkdirSync(join(dir, "basefolder"));
    const both = await diffBase(dir, "basefolder");
    expect(both.code).toBe(2);
    expect(both.err).toContain("is both a folder");
  });

  it("refuses a base stack file that is a link loop (it counted as new)", async () => {
    const dir = renamedBucket();
    const baseDir = join(dir, "base");
    mkdirSync(baseDir);
    symlinkSync(join(baseDir, "Pulumi.prod.yaml"), join(baseDir, "loop"));
    symlinkSync(join(baseDir, "loop"), join(baseDir, "Pulumi.prod.yaml"));
    const r = await diffBase(dir, baseDir);
    expect(r.code).toBe(2);
    expect(r.err).toContain("Pulumi.prod.yaml");
    unlinkSync(join(baseDir, "loop"));
  });
});
