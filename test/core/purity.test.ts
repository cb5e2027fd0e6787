import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

describe("layering", () => {
  it.each(["core", "workloads"])("%s/ imports nothing from Pulumi, components, stacks or the CLI", (folder) => {
    const offenders = tsFiles(join(repoRoot, folder)).flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/from\s+"([^"]+)"/g)]
        .map((m) => m[1]!)
        .filter((spec) => spec.startsWith("@pulumi/") || /(^|\/)(components|stacks|cli)(\/|$)/.test(spec))
        .map((spec) => `${relative(repoRoot, f)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it("core/ imports only core/ and npm packages (never workloads/)", () => {
    const core = join(repoRoot, "core");
    const offenders = tsFiles(core).flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/from\s+"(\.[^"]+)"/g)]
        .map((m) => resolve(dirname(f), m[1]!))
        .filter((target) => relative(core, target).startsWith(".."))
        .map((target) => `${relative(repoRoot, f)} imports ${relative(repoRoot, target)}`),
    );
    expect(offenders).toEqual([]);
  });
});
