import { runMain } from "../helpers/run-main";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtimeConfigMapName } from "../../workloads/contract/configmaps";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli";
import {
  MONITORING_FILES,
  repoRoot,
  runtime,
  NETWORK_POLICY_FILES,
  queueFiles,
  workloadFiles,
} from "../helpers/fixtures";

const run = (...argv: string[]) => runMain(argv);

const tmp = () => mkdtempSync(join(tmpdir(), "ray-gpu-"));

describe("ray-gpu CLI", () => {
  it("plan --stack dev prints pools and every workload decision", async () => {
    const r = await run("plan", "--stack", "dev");
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      "a10g-4x  gpu     g5.12xlarge  0-2    spot       47810m CPU, 169.3 GiB, 4 GPU  47 CPU, 168 GiB, 4 GPU  11.34",
    );
    expect(r.out).toContain(
      "Workload llm-pretrain (TrainingJob, meta-llama/Llama-3.2-1B): 4 GPUs on pool a10g-4x = 1 x g5.12xlarge",
    );
    expect(r.out).toMatch(/GPU memory: fits: requires [\d.]+ GiB of 21.99 GiB per GPU/);
    expect(r.out).toContain("gradientAccumulationSteps = 8: global batch 64 = 2 micro-batch x 8 steps x 4 GPUs");
    expect(r.out).toMatch(/worker\.objectStoreGiB = 33: 20% of 168 GiB/);
  });

  it("plan --stack prod --json lists the pools with allocatable and cost", async () => {
    const r = await run("plan", "--stack", "prod", "--json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as {
      pools: Record<string, unknown>[];
      workloads: { worker: { replicas: number }; decisions: unknown[] }[];
    };
    const train = doc.pools.find((p) => p["name"] === "train-a10g-4x")!;
    expect(train).toMatchObject({
      instanceType: "g5.12xlarge",
      maxNodes: 8,
      allocatablePerNode: { cpuMillis: 47810, memoryMiB: 173400, gpus: 4, maxPods: 737 },
      rayPodPerNode: { cpus: 47, memoryGiB: 168, gpus: 4 },
      usdPerHourAtMax: 45.376,
    });
    // llm-pretrain: 32 GPUs on the EFA pool's g5.48xlarge nodes, 8 each.
    expect(doc.workloads[0]!.worker.replicas).toBe(4);
    expect(doc.workloads[0]!.decisions.length).toBeGreaterThan(10);
  });

  it("render writes one YAML per object plus plan.json and its manifest, byte-stable", async () => {
    const a = join(tmp(), "out");
    const b = join(tmp(), "out");
    expect((await run("render", "--stack", "prod", "--out", a)).code).toBe(0);
    expect((await run("render", "--stack", "prod", "--out", b)).code).toBe(0);
    expect(readdirSync(a).sort()).toEqual(
      [
        ".ray-gpu-render.json",
        "plan.json",
        ...["llm-pretrain", "embed-chunks", "llm-sweep", "sft-qwen2-vl", "sft-llama-8b", "sft-mistral-7b"].flatMap(
          workloadFiles,
        ),
        `configmap-${runtimeConfigMapName(runtime)}.yaml`,
        ...NETWORK_POLICY_FILES,
        ...queueFiles(["system", "train-a10g-4x", "infer-a10g-1x", "efa-a10g-8x"]),
        ...MONITORING_FILES,
      ].sort(),
    );
    for (const f of readdirSync(a)) expect(readFileSync(join(a, f), "utf8")).toBe(readFileSync(join(b, f), "utf8"));
    const yaml = readFileSync(join(a, "rayjob-llm-pretrain.yaml"), "utf8");
    expect(yaml.indexOf("apiVersion")).toBeLessThan(yaml.indexOf("kind"));
    expect(yaml.indexOf("metadata")).toBeLessThan(yaml.indexOf("spec"));
  });

  it("plan --workload plans one file on a pool sized for it", async () => {
    const dir = tmp();
    const file = join(dir, "w.yaml");
    writeFileSync(file, "kind: TrainingJob\nname: solo\nmodel: meta-llama/Llama-3.2-1B\ngpus: 8\n");
    const r = await run("plan", "--workload", file, "--env", "prod", "--json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out) as {
      environment: string;
      workloads: { instanceType: string; worker: { replicas: number } }[];
    };
    expect(doc.environment).toBe("prod");
    expect(doc.workloads[0]).toMatchObject({ instanceType: "g5.12xlarge", worker: { replicas: 2 } });
  });

  it("a malformed workload file gets one message naming each bad path, exit 1", async () => {
    const dir = tmp();
    const file = join(dir, "w.json");
    writeFileSync(
      file,
      JSON.stringify({
        kind: "TrainingJob",
        name: "solo",
        model: "meta-llama/Llama-3.1-8b",
        gpus: -1,
        microBatchSise: 4,
        precision: "bf16",
      }),
    );
    const r = await run("plan", "--workload", file);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `ray-gpu: invalid input\n${file}: 4 problems\n` +
        '  ✖ TrainingJob "solo".model: unknown model; did you mean "meta-llama/Llama-3.1-8B"?; use a catalog id ' +
        "(see docs/memory.md#models) or give the architecture as an object { parameters, layers, hiddenSize, " +
        'attentionHeads, kvHeads, intermediateSize, vocabSize, mlp } (got "meta-llama/Llama-3.1-8b")\n' +
        '  ✖ TrainingJob "solo".gpus: must be >= 1 (got -1)\n' +
        '  ✖ TrainingJob "solo".precision: must be one of "bf16-mixed", "bf16-true", "fp16-mixed", "fp32" (got "bf16")\n' +
        '  ✖ TrainingJob "solo".microBatchSise: unknown key; did you mean "microBatchSize"? (got 4)\n',
    );
  });

  it("a malformed stack file gets every problem and exit 1, from the real binary, without a stack trace", async () => {
    const dir = tmp();
    copyFileSync(join(repoRoot, "Pulumi.yaml"), join(dir, "Pulumi.yaml"));
    const text = readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8")
      .replace("instanceType: g5.12xlarge", "instanceType: g5.13xlarge")
      .replace("maxNodes: 3", "maxNodes: 3\n      maxNode: 3")
      .replace("gpus: 4", "gpus: 3");
    writeFileSync(join(dir, "Pulumi.dev.yaml"), text);
    const r = await runCli(["--dir", dir, "plan", "--stack", "dev"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("ray-gpu:platform.gpuNodeGroups[0].instanceType: must be one of");
    expect(r.stderr).toContain('(got "g5.13xlarge")');
    expect(r.stderr).toContain('ray-gpu:platform.cpuNodeGroup.maxNode: unknown key; did you mean "maxNodes"?');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("reports plan-time problems (GPU count, pool size) the same way", async () => {
    const dir = tmp();
    const text = readFileSync(join(repoRoot, "Pulumi.dev.yaml"), "utf8").replace("gpus: 4", "gpus: 6");
    writeFileSync(join(dir, "Pulumi.dev.yaml"), text);
    const r = await run("--dir", dir, "plan", "--stack", "dev");
    expect(r.code).toBe(1);
    expect(r.err).toContain("✖ ray-gpu:workloads[0].gpus: must be a multiple of 4");
  });

  it("YAML syntax errors name the file, line and column, and show the line with a caret", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "Pulumi.dev.yaml"), "config:\n  ray-gpu:environment: dev\n   bad: [\n");
    const r = await run("--dir", dir, "plan", "--stack", "dev");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/Pulumi\.dev\.yaml:\d+:\d+: [^\n]*[^:\n]\n {4,}\S/);
    expect(r.err).toMatch(/\n {4,}\^/);
  });

  it("usage errors exit 2, --help exits 0 and documents every flag", async () => {
    expect((await run("plan")).code).toBe(2);
    expect((await run("plan", "--stack", "staging")).err).toContain('no stack "staging"');
    expect((await run("plan", "--stack", "staging")).code).toBe(2);
    expect((await run("render", "--stack", "dev")).code).toBe(2);
    expect((await run("plan", "--workload", "x.yaml", "--env", "qa")).code).toBe(2);
    expect((await run("bogus")).code).toBe(2);
    const help = await run("plan", "--help");
    expect(help.code).toBe(0);
    for (const flag of ["--stack", "--workload", "--env", "--json"]) expect(help.out).toContain(flag);
    const renderHelp = await run("render", "--help");
    for (const flag of ["--stack", "--out"]) expect(renderHelp.out).toContain(flag);
  });
});
