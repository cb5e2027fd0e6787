/**
 * `ray-gpu diff` on fixture git repositories made by the test: a base commit and a working tree with real stack
 * changes. Asserts the reported changes, the summary line, and the exit code of each `--fail-on` rule.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { describe, expect, it } from "vitest";
import { main } from "../../../cli/main";
import { COMMENT_LIMIT } from "../../../cli/diff/markdown";
import { CLI_DOC, DIFF_BEGIN, DIFF_END, sectionOf } from "../../../scripts/generate";
import { diff, docsChange, docsComment, gpuPools, platform, prod, repo, workloads } from "./fixture";

describe("ray-gpu diff", () => {
  it("reports a GPU change as the values that change, with the new reasons, the job's cost and a summary line", async () => {
    const head = prod();
    expect(workloads(head)[1]!["gpus"]).toBe(8);
    workloads(head)[1]!["gpus"] = 4;
    const r = await diff(repo(prod(), head));
    expect(r.code).toBe(0);
    expect(r.out.split("\n")[0]).toBe(
      "-4 GPUs, -$4.85/h for jobs, -$0.08 per run of the jobs, +$0.00/h for pools at max, 1 workload re-planned, 0 added, " +
        "0 removed, 0 stop fitting, 0 replacements",
    );
    // An example job has no RayJob to submit: the platform is untouched.
    expect(r.out).toContain("platform resources: no change");
    expect(r.out).toMatch(/embed-chunks: headroom [\d.]+ → [\d.]+ GiB per GPU; -\$4\.85\/h \(9\.70 → 4\.85\)/);
    expect(r.out).toMatch(/gpus: 8 → 4/);
    expect(r.out).toMatch(/worker\.replicas: 8 → 4 \(4 GPUs \//);
  });

  it("names a new workload and a pool whose size changes, with the cost at max", async () => {
    const head = prod();
    workloads(head).push({ ...workloads(head)[1]!, name: "embed-more" });
    gpuPools(head)[1]!["maxNodes"] = 12;
    const r = await diff(repo(prod(), head), "--format", "json", "--no-preview");
    const doc = JSON.parse(r.out) as { summary: string; stacks: { diff: { added: string[]; pools: unknown[] } }[] };
    expect(doc.stacks[0]!.diff.added).toEqual(["embed-more"]);
    expect(doc.stacks[0]!.diff.pools).toMatchObject([{ name: "infer-a10g-1x", status: "changed" }]);
    expect(doc.summary).toMatch(
      /^\+8 GPUs, \+\$9\.70\/h for jobs, \+\$162\.98 per run of the jobs, \+\$4\.85\/h for pools at max, 0 workloads re-planned, 1 added/,
    );
  });

  it("says loudly when a model change stops fitting, and --fail-on no-fit exits 3", async () => {
    const head = prod();
    workloads(head)[1]!["model"] = "meta-llama/Llama-2-13b-hf";
    workloads(head)[1]!["kind"] = "EmbeddingPipeline";
    const dir = repo(prod(), head);
    // With the preview: the program would refuse the stack, so its resources are not compared, and the rule still fires.
    const r = await diff(dir, "--fail-on", "no-fit");
    expect(r.out).toContain("embed-chunks: STOPS FITTING IN GPU MEMORY");
    expect(r.out.split("\n")[0]).toMatch(/1 stops fitting, resources not previewed$/);
    expect(r.out).toMatch(/platform resources: not previewed \(the program would fail now: /);
    expect(r.code).toBe(3);
    expect(r.err).toContain("no-fit: embed-chunks does not fit in GPU memory");
    expect((await diff(dir, "--no-preview")).code).toBe(0);
  });

  it("switching the adopted cluster for another replaces every Kubernetes object, and says so", async () => {
    const base = prod();
    platform(base)["cluster"] = { mode: "existing", name: "ml-prod" };
    const head = structuredClone(base);
    platform(head)["cluster"] = { mode: "existing", name: "ml-prod-2" };
    const r = await diff(repo(base, head), "--format", "json", "--fail-on", "replace");
    const doc = JSON.parse(r.out) as {
      stacks: { resources: { type: string; status: string; replacedBecause?: string[] }[] }[];
    };
    const k8s = doc.stacks[0]!.resources.filter((c) => c.type.startsWith("kubernetes:"));
    expect(k8s.length).toBeGreaterThan(10);
    expect(k8s.every((c) => c.status === "replaced")).toBe(true);
    expect(k8s[0]!.replacedBecause).toEqual([
      "the stack's Kubernetes objects move from cluster ml-prod (adopted) to ml-prod-2 (adopted)",
    ]);
    // the workload namespace holds every job: replacing it is a loss
    expect(r.code).toBe(3);
  });

  it("--fail-on prod-lifecycle fires when prod loses its failed-head retention, and not when nothing is lost", async () => {
    const base = prod();
    platform(base)["queueing"] = { enabled: false };
    const r = await diff(repo(base, prod()), "--fail-on", "prod-lifecycle");
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/prod-lifecycle: llm-pretrain lifecycle\.cleanup\.mode: rules → shutdown/);
    expect((await diff(repo(prod(), prod()), "--fail-on", "prod-lifecycle")).code).toBe(0);
  });

  it("doubling a job's rows doubles its time and cost per run, in its line and the summary; --fail-on run-cost gates it", async () => {
    const head = prod();
    const sft = workloads(head).find((w) => w["name"] === "sft-llama-8b")!;
    sft["dataset"] = { ...(sft["dataset"] as object), rows: 200000 };
    const dir = repo(prod(), head);
    const r = await diff(dir, "--no-preview", "--format", "json");
    type Run = { wallSeconds: number; costUsd: number };
    const doc = JSON.parse(r.out) as {
      summary: string;
      stacks: { diff: { changed: { name: string; perRun: { before: Run; after: Run } }[] } }[];
    };
    const change = doc.stacks[0]!.diff.changed.find((c) => c.name === "sft-llama-8b")!;
    const { before, after } = change.perRun;
    const startup = 70;
    expect((after.wallSeconds - startup) / (before.wallSeconds - startup)).toBeCloseTo(2, 1);
    expect(after.costUsd / before.costUsd).toBeGreaterThan(1.95);
    const delta = (after.costUsd - before.costUsd).toFixed(2);
    expect(doc.summary).toContain(`+$${delta} per run of the jobs`);
    const text = (await diff(dir, "--no-preview")).out;
    expect(text).toMatch(new RegExp(`sft-llama-8b: .*; per run \\d+ h \\d\\d min, \\$${before.costUsd.toFixed(2)} → `));
    const fired = await diff(dir, "--no-preview", "--fail-on", "run-cost:50");
    expect(fired.code).toBe(3);
    expect(fired.err).toMatch(
      new RegExp(`run-cost: sft-llama-8b costs \\+\\$${delta} more per run \\(.*\\), over \\+\\$50\\.00`),
    );
    expect((await diff(dir, "--no-preview", "--fail-on", `run-cost:${Math.ceil(Number(delta))}`)).code).toBe(0);
  });

  it("--fail-on cost:<usd> fires above the threshold only", async () => {
    const head = prod();
    gpuPools(head)[0]!["maxNodes"] = 10;
    const dir = repo(prod(), head);
    expect((await diff(dir, "--fail-on", "cost:20", "--no-preview")).code).toBe(0);
    const r = await diff(dir, "--fail-on", "cost:5", "--no-preview");
    expect(r.code).toBe(3);
    expect(r.err).toMatch(/cost: the pools' cost at max \+\$11\.34\/h exceeds \+\$5\.00\/h/);
  });

  it(
    "--fail-on cost:<usd> fires when a job doubles its GPUs on pools whose size stays, and the summary agrees " +
      "with the job line",
    async () => {
      const base = prod();
      workloads(base)[1]!["gpus"] = 4;
      const dir = repo(base, prod());
      const r = await diff(dir, "--fail-on", "cost:1", "--no-preview");
      expect(r.out.split("\n")[0]).toMatch(
        /^\+4 GPUs, \+\$4\.85\/h for jobs, \+\$0\.08 per run of the jobs, \+\$0\.00\/h for pools at max, /,
      );
      expect(r.out).toMatch(/embed-chunks: .*\+\$4\.85\/h \(4\.85 → 9\.70\)/);
      expect(r.code).toBe(3);
      expect(r.err).toMatch(/cost: the jobs' cost while they run \+\$4\.85\/h exceeds \+\$1\.00\/h/);
      expect(r.err).not.toMatch(/pools' cost/);
      expect((await diff(dir, "--fail-on", "cost:5", "--no-preview")).code).toBe(0);
    },
  );

  it("says what it is doing on the progress channel (a terminal's stderr), and nothing of it elsewhere", async () => {
    const dir = repo(prod(), prod());
    const progress: string[] = [];
    let err = "";
    const code = await main(["-C", dir, "diff", "--base", "HEAD", "--stack", "prod"], {
      out: () => undefined,
      err: (s) => (err += s),
      cwd: dir,
      progress: (s) => progress.push(s),
    });
    expect(code).toBe(0);
    expect(progress).toEqual([
      "planning each stack at HEAD and now…",
      "previewing prod at the base and now (the Pulumi program, offline; a few seconds each)…",
      expect.stringMatching(/^previewed prod (at the base|now)$/),
      expect.stringMatching(/^previewed prod (at the base|now)$/),
    ]);
    expect(err).toBe("");
  });

  it("reads the base from a folder too, and refuses unknown rules and refs as usage errors", async () => {
    const head = prod();
    workloads(head).pop();
    const dir = repo(prod(), head);
    const baseDir = join(dir, "base");
    mkdirSync(baseDir);
    writeFileSync(join(baseDir, "Pulumi.prod.yaml"), stringify(prod()));
    let out = "";
    const code = await main(["-C", dir, "diff", "--base", baseDir, "--stack", "prod"], {
      out: (s) => (out += s),
      err: () => undefined,
      cwd: dir,
    });
    expect(code).toBe(0);
    expect(out).toContain("removed workload sft-mistral-7b");
    expect((await diff(dir, "--fail-on", "sometimes")).code).toBe(2);
    expect((await diff(dir, "--fail-on", "replace", "--no-preview")).code).toBe(2);
    // A stack deleted from the working tree is still found at the base by --all-stacks, all its workloads removed.
    rmSync(join(dir, "Pulumi.prod.yaml"));
    let all = "";
    const allCode = await main(["-C", dir, "diff", "--base", "HEAD", "--all-stacks"], {
      out: (s) => (all += s),
      err: () => undefined,
      cwd: dir,
    });
    expect(allCode).toBe(0);
    expect(all).toContain("Stack prod:");
    expect(all).toContain("removed workload llm-pretrain");
    const badRef = await main(["-C", dir, "diff", "--base", "no-such-ref", "--stack", "prod"], {
      out: () => undefined,
      err: () => undefined,
      cwd: dir,
    });
    expect(badRef).toBe(2);
  });

  it("keeps the Markdown of a 200-workload change under GitHub's comment limit, saying when it cuts", async () => {
    const base = prod();
    const template = workloads(base)[1]!;
    platform(base)["gpuNodeGroups"] = [
      { name: "infer-a10g-1x", instanceType: "g5.2xlarge", maxNodes: 400 },
      ...(platform(base)["gpuNodeGroups"] as object[]).slice(0, 1),
    ];
    // Without the queue: Kueue would admit more heads than the CPU pool's nodes pack (its quota is a sum over nodes).
    platform(base)["queueing"] = { enabled: false };
    base.config["ray-gpu:workloads"] = Array.from({ length: 200 }, (_, i) => ({
      ...template,
      name: `embed-${i}`,
      gpus: 1,
    }));
    const head = structuredClone(base);
    for (const w of workloads(head)) w["gpus"] = 2;
    const r = await diff(repo(base, head), "--format", "markdown", "--no-preview");
    expect(r.err).toBe("");
    expect(r.out.length).toBeLessThanOrEqual(COMMENT_LIMIT + 1);
    expect(r.out.split("\n")[0]).toBe(
      "**+200 GPUs, +$242.40/h for jobs, +$4.00 per run of the jobs, +$0.00/h for pools at max, 200 workloads " +
        "re-planned, 0 added, 0 removed, 0 stop fitting, resources not previewed**",
    );
    expect(r.out).toContain("<details><summary>embed-0:");
    expect(r.out).toContain("cut to fit GitHub's comment limit");
  });

  it("a bucket rename replaces the bucket: said in the summary, loudly, and --fail-on replace exits 3", async () => {
    const head = prod();
    platform(head)["storage"] = { ...(platform(head)["storage"] as object), bucketName: "acme-ml-prod" };
    const dir = repo(prod(), head);
    const r = await diff(dir, "--fail-on", "replace");
    expect(r.code).toBe(3);
    expect(r.out.split("\n")[0]).toMatch(/, 7 replacements \(REPLACES Bucket ray-gpu-storage-bucket in prod\)$/);
    expect(r.out).toMatch(/REPLACED Bucket ray-gpu-storage-bucket \(because bucket\): loses the bucket's datasets/);
    // prod protects its bucket: pulumi up would stop, and the diff says so
    expect(r.out).toContain("it is protected, so pulumi up stops with an error");
    expect(r.out).toContain("bucket: <computed: bucket name of ray-gpu-storage-bucket> → acme-ml-prod");
    expect(r.err).toMatch(/replace: prod replaces Bucket ray-gpu-storage-bucket: the bucket's datasets/);
    // the same change without the rule runs and exits 0
    expect((await diff(dir)).code).toBe(0);
  });

  it("adopting an existing cluster deletes the one the stack created, and --fail-on replace says so", async () => {
    const head = prod();
    platform(head)["cluster"] = { mode: "existing", name: "ml-prod" };
    const r = await diff(repo(prod(), head), "--fail-on", "replace", "--format", "json");
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.out) as { fired: string[]; stacks: { resources: { type: string; status: string }[] }[] };
    expect(doc.fired).toContain(
      "replace: prod deletes Cluster ray-gpu-cluster-eks: the cluster: every node, running job and in-cluster object",
    );
    const cluster = doc.stacks[0]!.resources.find((c) => c.type === "aws:eks/cluster:Cluster");
    expect(cluster).toMatchObject({ status: "removed" });
  });

  it("a submitted job's GPU change replaces its RayJob (the job restarts) and leaves every other job alone", async () => {
    const { head: base } = docsChange();
    const head = structuredClone(base);
    const sft = workloads(head).find((w) => w["name"] === "sft-llama-8b")!;
    expect(sft["gpus"]).toBe(8);
    sft["gpus"] = 4;
    const r = await diff(repo(base, head), "--format", "json");
    const doc = JSON.parse(r.out) as {
      summary: string;
      stacks: { resources: { type: string; name: string; status: string; replacedBecause?: string[] }[] }[];
    };
    const jobs = doc.stacks[0]!.resources.filter((c) => c.type === "kubernetes:ray.io/v1:RayJob");
    expect(jobs.map((j) => [j.name, j.status])).toEqual([["sft-llama-8b-rayjob", "replaced"]]);
    expect(jobs[0]!.replacedBecause!.some((p) => p.startsWith("spec."))).toBe(true);
    expect(doc.summary).toMatch(
      new RegExp(
        "^-4 GPUs, -\\$5\\.67/h for jobs, -\\$0\\.11 per run of the jobs, \\+\\$0\\.00/h for pools at max, " +
          "1 workload re-planned, .* [1-9]\\d* replacements?$",
      ),
    );
  });

  it("the docs page shows the comment this fixture renders (npm run generate rewrites it)", async () => {
    const comment = await docsComment();
    expect(comment.split("\n")[0]).toMatch(
      /^\*\*-4 GPUs, -\$4\.85\/h for jobs, -\$0\.08 per run of the jobs, \+\$4\.85\/h for pools at max, .*REPLACES Bucket/,
    );
    expect(sectionOf(readFileSync(CLI_DOC, "utf8"), DIFF_BEGIN, DIFF_END)).toBe(`${comment}\n`);
  });
});
