/**
 * How `pulumi up` finds the program (pulumi/pulumi: pkg/engine/project.go `getPwdMain`, sdk/nodejs/cmd/run/run.ts):
 * a `main:` naming a file makes its folder the working directory and skips package.json's `exports`/`main`
 * (which point at the library), and ts-node then reads `tsconfig.json` from that folder.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { repoRoot } from "../helpers/fixtures";

describe("Pulumi project", () => {
  const project = parse(readFileSync(join(repoRoot, "Pulumi.yaml"), "utf8")) as {
    name: string;
    main: string;
    runtime: { name: string; options: { typescript: boolean } };
  };

  it("names the program file itself, not a folder package.json would redirect", () => {
    expect(project).toMatchObject({ name: "ray-gpu", runtime: { name: "nodejs", options: { typescript: true } } });
    expect(project.main).toBe("stacks/index.ts");
    expect(existsSync(join(repoRoot, project.main))).toBe(true);
  });

  it("gives ts-node the project's compiler settings in the program's folder", () => {
    const tsconfig = JSON.parse(readFileSync(join(repoRoot, dirname(project.main), "tsconfig.json"), "utf8")) as {
      extends: string;
    };
    expect(tsconfig.extends).toBe("../tsconfig.json");
  });
});
