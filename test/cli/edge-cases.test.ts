/** Inputs that once crashed or misbehaved: each now gets one clear message and the right exit code. */
import { runMain } from "../helpers/run-main";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { redact } from "../../cli/preview/run";
import { repoRoot } from "../helpers/fixtures";
import { messageFlaws } from "../helpers/messages";

async function run(...argv: string[]) {
  const { code, out, err } = await runMain(argv);
  // Every message these inputs get reads as a whole sentence, with no word said twice.
  expect(messageFlaws(err), err).toEqual([]);
  return { code, out, err };
}

function workloadFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "ray-gpu-")), "w.yaml");
  writeFileSync(file, text);
  return file;
}

function stackDir(edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-"));
  writeFileSync(join(dir, "Pulumi.dev.yaml"), edit(readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8")));
  return dir;
}

describe("edge cases", () => {
  it("the message rule catches what readers tripped on: a doubled word, a cut sentence, a dangling colon", () => {
    expect(messageFlaws("ray-gpu: big does not fit: needs 30 GiB; or or a pool of g5.4xlarge")).toHaveLength(1);
    expect(messageFlaws("  ✖ x: use a pool of g5.8xlarge; g5.12xlarge has 48 or")).toHaveLength(1);
    expect(
      messageFlaws("  ✖ f.yaml:3: Nested mappings are not allowed in compact mappings at line 3, column 8:"),
    ).toHaveLength(1);
    expect(messageFlaws('  ✖ w.name: must be one of "a", "b" (got "or or")\n      foo: : bar\n      ^')).toEqual([]);
  });

  it("a 70B model on 4 GPUs: one sentence naming the file, the finding and each way out, joined once", async () => {
    const file = workloadFile("kind: TrainingJob\nname: big\nmodel: meta-llama/Llama-3.1-70B\ngpus: 4\n");
    const r = await run("plan", "--workload", file);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      new RegExp(`^ray-gpu: ${file}: 1 workload does not fit\n  ✖ big: does not fit in host memory: `),
    );
    expect(r.err).toMatch(
      /; use gpus: 64 .*; or use a pool of g5\.4xlarge .* \(g5\.12xlarge has 48 GiB RAM per GPU\)\n$/,
    );
  });

  it("rejects knobs that exclude each other instead of crashing", async () => {
    const r = await run(
      "plan",
      "--workload",
      workloadFile(
        "kind: TrainingJob\nname: w\nmodel: meta-llama/Llama-3.2-1B\ngpus: 4\nzeroStage: 0\noffload: optimizer\n",
      ),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain('✖ TrainingJob "w".offload: optimizer offload needs ZeRO 2 or 3 (zeroStage is 0)');
  });

  it("rejects a tensor-parallel size larger than a node or not dividing the GPUs", async () => {
    const r = await run(
      "plan",
      "--workload",
      workloadFile(
        "kind: BatchInference\nname: w\nmodel: meta-llama/Llama-3.1-8B-Instruct\ngpus: 4\ntensorParallelSize: 8\n",
      ),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      '✖ BatchInference "w".tensorParallelSize: must be at most 4, the GPUs of one g5.12xlarge node',
    );
  });

  it("rejects sequences longer than the model's context", async () => {
    const r = await run(
      "plan",
      "--workload",
      workloadFile("kind: EmbeddingPipeline\nname: w\nmodel: BAAI/bge-small-en-v1.5\ngpus: 1\nsequenceLength: 8192\n"),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      `✖ EmbeddingPipeline "w".sequenceLength: 8192 tokens exceed the model's context of 512 tokens (got 8192)`,
    );
  });

  it("fits vLLM's largest allowed memory fraction when the model is small", async () => {
    const r = await run(
      "plan",
      "--json",
      "--workload",
      workloadFile(
        "kind: BatchInference\nname: w\nmodel: Qwen/Qwen2.5-0.5B\ngpus: 1\ninstanceType: g5.2xlarge\ngpuMemoryUtilization: 0.95\n",
      ),
    );
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { workloads: { fits: boolean }[] }).workloads[0]!.fits).toBe(true);
  });

  it("reports a missing workload file as a usage error", async () => {
    const r = await run("plan", "--workload", "/nonexistent/w.yaml");
    expect(r.code).toBe(2);
    expect(r.err).toContain("workload file /nonexistent/w.yaml: does not exist (ENOENT)");
  });

  it("applies the environment's rules to a stack's pools under --env", async () => {
    const r = await run(
      "plan",
      "--stack",
      "dev",
      "--env",
      "prod",
      "--workload",
      workloadFile("kind: TrainingJob\nname: w\nmodel: meta-llama/Llama-3.2-1B\ngpus: 4\n"),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain("capacityType: spot is allowed in dev only");
  });

  it.each([
    {
      case: "the observability namespace as the workload namespace",
      edit: (t: string) => t.replace("workloadNamespace: ray-jobs", "workloadNamespace: monitoring"),
      path: "ray-gpu:platform.workloadNamespace: is a namespace the platform or Kubernetes uses",
    },
    {
      case: "one availability zone twice",
      edit: (t: string) =>
        t.replace(
          "    workloadNamespace: ray-jobs",
          "    workloadNamespace: ray-jobs\n    network: { availabilityZoneNames: [us-east-1a, us-east-1a] }",
        ),
      path: "ray-gpu:platform.network.availabilityZoneNames[1]: repeats entry [0]",
    },
    {
      case: "a variable KubeRay sets",
      edit: (t: string) =>
        t.replace(
          "      name: llm-pretrain\n",
          "      name: llm-pretrain\n      env: { RAY_ADDRESS: 10.0.0.1:6379 }\n",
        ),
      path: "ray-gpu:workloads[0].env.RAY_ADDRESS: is set by KubeRay on every Ray container",
    },
    {
      case: "a CPU-only Ray image for a GPU job",
      edit: (t: string) => t.replace("image: rayproject/ray:2.58.0-py311-gpu", "image: rayproject/ray:2.58.0-py311"),
      path: "ray-gpu:workloads[0].image: is a CPU-only Ray image",
    },
  ])("refuses $case with exit 1 and the path, no stack trace", async ({ edit, path }) => {
    const dir = stackDir(edit);
    expect(readFileSync(join(dir, "Pulumi.dev.yaml"), "utf8")).not.toBe(
      readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8"),
    );
    const r = await run("-C", dir, "plan", "--stack", "dev");
    expect(r.code).toBe(1);
    expect(r.err).toContain(`✖ ${path}`);
    expect(r.err).not.toMatch(/\n\s+at .+:\d+:\d+/);
  });

  it("rejects an EFA pool without its one zone, and a pool that leaves a worker no CPU", async () => {
    const efa = await run(
      "-C",
      stackDir((t) =>
        t.replace(
          "capacityType: spot\n      - name: a10g-1x",
          "capacityType: spot\n        efa: true\n      - name: a10g-1x",
        ),
      ),
      "plan",
      "--stack",
      "dev",
    );
    expect(efa.code).toBe(1);
    expect(efa.err).toContain(
      "✖ ray-gpu:platform.gpuNodeGroups[0].availabilityZone: an EFA pool needs one: EFA's OS-bypass traffic does not " +
        "leave its subnet",
    );
    expect(efa.err).not.toMatch(/\n\s+at .+:\d+:\d+/);
    const starved = await run(
      "-C",
      stackDir((t) =>
        t
          .replace(
            "        capacityType: spot\n    storage:",
            "        capacityType: spot\n        daemonSetReserve: { cpuMillis: 7500, memoryMiB: 1024 }\n    storage:",
          )
          .replace("nodePool: a10g-4x", "nodePool: a10g-1x"),
      ),
      "plan",
      "--stack",
      "dev",
    );
    // The platform check refuses the pool itself, before any workload is placed on it.
    expect(starved.code).toBe(1);
    expect(starved.err).toContain("daemonSetReserve: leaves no room for a Ray pod");
  });

  it("render refuses a Pulumi project folder, even with --force", async () => {
    const refused = await run("render", "--stack", "dev", "--out", repoRoot, "--force");
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/refusing to render into .* \(it holds|holds a Pulumi project/);
  });

  it("redacts secret values but not fields that merely mention tokens", () => {
    expect(redact({ metadataOptions: { httpTokens: "required" }, accessToken: "x" })).toEqual({
      metadataOptions: { httpTokens: "required" },
      accessToken: "[redacted]",
    });
  });
});
