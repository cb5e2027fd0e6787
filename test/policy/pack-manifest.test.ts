import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

interface Manifest {
  readonly version: string;
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
  readonly exports: Record<string, { readonly default: string }>;
}
interface Lock {
  readonly packages: Record<string, { readonly version?: string; readonly dependencies?: Record<string, string> }>;
}
const json = <T>(path: string) => JSON.parse(readFileSync(join(repoRoot, path), "utf8")) as T;
const root = json<Manifest>("package.json");
const pack = json<Manifest>("policy-pack/package.json");
const lock = json<Lock>("policy-pack/package-lock.json");

describe("policy-pack/ (what `pulumi preview --policy-pack` installs and runs)", () => {
  it("pins exact versions: this package's own, and the @pulumi/policy and @pulumi/pulumi the tests ran with", () => {
    for (const [name, version] of Object.entries(pack.dependencies)) expect(version, name).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pack.dependencies).toEqual({
      "@pulumi/policy": root.devDependencies["@pulumi/policy"],
      "@pulumi/pulumi": root.devDependencies["@pulumi/pulumi"],
      "pulumi-ray-gpu": root.version,
    });
  });

  it("has a lockfile that agrees with its package.json", () => {
    expect(lock.packages[""]!.dependencies).toEqual(pack.dependencies);
    for (const [name, version] of Object.entries(pack.dependencies))
      expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(version);
  });

  it("loads the rules through the package's ./policy export, which the build provides", async () => {
    expect(readFileSync(join(repoRoot, "policy-pack/index.js"), "utf8")).toContain(
      'require("pulumi-ray-gpu/policy").createPolicyPack()',
    );
    expect(root.exports["./policy"]!.default).toBe("./dist/policy/index.js");
    const built = (await import(join(repoRoot, "dist/policy/index.js"))) as Record<string, unknown>;
    expect(typeof built["createPolicyPack"]).toBe("function");
  });
});
