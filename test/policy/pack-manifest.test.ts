import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

interface Manifest {
  readonly version: string;
  readonly dependencies: Record<string, string>;
  readonly peerDependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
  readonly exports: Record<string, { readonly default: string }>;
  readonly files: readonly string[];
}
interface LockEntry {
  readonly version?: string;
  readonly resolved?: string;
  readonly integrity?: string;
  readonly link?: boolean;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}
interface Lock {
  readonly packages: Record<string, LockEntry>;
}
const json = <T>(path: string) => JSON.parse(readFileSync(join(repoRoot, path), "utf8")) as T;
const root = json<Manifest>("package.json");
const pack = json<Manifest>("policy-pack/package.json");
const lock = json<Lock>("policy-pack/package-lock.json");

describe("policy-pack/ (what `pulumi preview --policy-pack` installs and runs)", () => {
  it("pins the @pulumi/policy and @pulumi/pulumi the tests ran with, and takes this package from the folder above", () => {
    expect(pack.dependencies).toEqual({
      "@pulumi/policy": root.devDependencies["@pulumi/policy"],
      "@pulumi/pulumi": root.devDependencies["@pulumi/pulumi"],
      // The package the pack ships in (installed as a copy: `npm ci --install-links`), never a registry lookup.
      "pulumi-ray-gpu": "file:..",
    });
  });

  it("has a lockfile that agrees with its package.json and with this package's own manifest", () => {
    expect(lock.packages[""]!.dependencies).toEqual(pack.dependencies);
    for (const name of ["@pulumi/policy", "@pulumi/pulumi"])
      expect(lock.packages[`node_modules/${name}`]?.version, name).toBe(pack.dependencies[name]);
    const self = lock.packages["node_modules/pulumi-ray-gpu"]!;
    expect(self).toMatchObject({ version: root.version, resolved: "file:..", dependencies: root.dependencies });
    expect(self.peerDependencies).toEqual(root.peerDependencies);
    expect(self.link).toBeUndefined();
  });

  it("fixes the tree: every registry entry has an integrity hash, and the only other entry is this package", () => {
    const entries = Object.entries(lock.packages).filter(([path]) => path !== "");
    expect(entries.length).toBeGreaterThan(200);
    const unhashed = entries.filter(([, e]) => !/^sha512-[A-Za-z0-9+/]+=*$/.test(e.integrity ?? ""));
    expect(unhashed.map(([path, e]) => `${path} ${e.resolved}`)).toEqual(["node_modules/pulumi-ray-gpu file:.."]);
    for (const [path, e] of entries.filter(([p]) => p !== "node_modules/pulumi-ray-gpu"))
      expect(e.resolved ?? "https://registry.npmjs.org/", path).toMatch(/^https:\/\/registry\.npmjs\.org\//);
  });

  it("is installed as docs/security.md says: a copy of the package, the pack's tree from its lockfile, no scripts", () => {
    expect(readFileSync(join(repoRoot, "docs/security.md"), "utf8")).toContain(
      [
        "cp -r node_modules/pulumi-ray-gpu ray-gpu-policy",
        "(cd ray-gpu-policy/policy-pack && npm ci --install-links --ignore-scripts)",
        "pulumi preview --policy-pack ./ray-gpu-policy/policy-pack",
      ].join("\n"),
    );
    expect(root.files).toContain("policy-pack/*");
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
