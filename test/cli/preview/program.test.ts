/**
 * `ray-gpu preview --program DIR` on programs written as docs/library.md shows, each with one mistake that fails on a
 * real account: the real binary, each program in a project folder whose node_modules links this checkout's packages
 * (no install). Plain JavaScript programs, and the documented TypeScript one through ts-node as `pulumi` runs it.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../helpers/fixtures";
import { runCli } from "../../helpers/run-cli";

/** A Pulumi project folder with `files`, its node_modules this checkout's (pulumi-ray-gpu: the built package). */
function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "ray-gpu-program-"));
  mkdirSync(join(dir, "node_modules"));
  for (const pkg of ["@pulumi", "@types", "typescript"])
    symlinkSync(join(repoRoot, "node_modules", pkg), join(dir, "node_modules", pkg), "dir");
  symlinkSync(repoRoot, join(dir, "node_modules", "pulumi-ray-gpu"), "dir");
  writeFileSync(join(dir, "Pulumi.yaml"), "name: mine\nruntime: nodejs\n");
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const preview = (dir: string) => runCli(["preview", "--program", dir]);

/** A platform like docs/library.md's (a public CIDR of ours), then `rest`. */
const onPlatform = (rest: string, name = "ray") => `
const lib = require("pulumi-ray-gpu");
const platformConfig = {
  cluster: { mode: "create", name: "ml", publicAccessCidrs: ["52.94.76.0/22"] },
  gpuNodeGroups: [{ name: "a10g", instanceType: "g5.12xlarge", maxNodes: 2 }],
  observability: { enabled: true },
};
const platform = new lib.RayGpuPlatform(${JSON.stringify(name)}, {
  config: { environment: "dev", region: "us-east-1", platform: platformConfig },
});
const render = (pools) => new lib.TrainingJob({ kind: "TrainingJob", name: "llama-ddp", model: "meta-llama/Llama-3.2-1B",
  image: "rayproject/ray:2.58.0-py311-gpu", entrypoint: "python -m train", gpus: 8, globalBatchSize: 64 })
  .render({ environment: "dev", pools, namespace: platform.workloadNamespace, runtime: lib.loadRuntimePackage() });
${rest}
`;

/** Each class of program the review found failing on a real account, and what the refusal must name. */
const CASES = [
  {
    name: "(a) the CoreDNS add-on created before any node group",
    program: `
const pulumi = require("@pulumi/pulumi");
const res = (type, name, props, opts) => new pulumi.CustomResource(type, name, props, opts);
const cluster = res("aws:eks/cluster:Cluster", "eks", { name: "ml" });
res("aws:eks/addon:Addon", "coredns", { clusterName: "ml", addonName: "coredns" }, { dependsOn: [cluster] });
res("aws:eks/nodeGroup:NodeGroup", "system", { scalingConfig: { minSize: 1, maxSize: 2 }, taints: [] }, { dependsOn: [cluster] });
`,
    named: [/✖ coredns: add-on coredns runs a Deployment, but nothing orders it after a node group .* system/],
  },
  {
    name: "(b) a KubeRayOperator given only { provider }",
    program: onPlatform(`new lib.KubeRayOperator("mine", {}, { provider: platform.provider });`),
    named: [/✖ mine-release: release kuberay-operator .* not ordered after a node group .* and CoreDNS/],
  },
  {
    name: "(c) a RayWorkload given only { providers }",
    program: onPlatform(
      `new lib.RayWorkload("llama", { objects: render(platform.plan.pools) }, { providers: [platform.provider] });`,
    ),
    named: [/✖ llama-rayjob: its kind \(ray\.io\) exists only once the kuberay-operator chart installs its CRDs/],
  },
  {
    name: "(d) a job rendered against another config's pools",
    program: onPlatform(`
const otherPools = [{ name: "b", instanceType: "g5.12xlarge", maxNodes: 2 }];
const other = lib.planPools(lib.parsePlatformConfig({ ...platformConfig, gpuNodeGroups: otherPools }));
new lib.RayWorkload("llama", { objects: render(other), platform });`),
    named: [/✖ llama-rayjob: its worker group gpu-b's pods can land on no node group .*ray-gpu\.io\/pool=b/],
  },
  {
    name: "(f) a job rendered outside the platform's config, as an account the platform does not create",
    program: onPlatform(`new lib.RayWorkload("llama", { objects: render(platform.plan.pools), platform });`),
    named: [/✖ llama-rayjob: its head pod would run as service account "llama-ddp", which no resource of the program/],
  },
  {
    name: "(e) a platform whose name puts a Helm release over 53 characters",
    program: onPlatform("", "ray-gpu-platform"),
    named: [
      /✖ RayGpuPlatform ray-gpu-platform: its children are named "ray-gpu-platform-<role>": a name of at most 8 characters fits/,
      /✖ ray-gpu-platform-observability-dcgm-exporter-release: .* 61 characters, but a Helm release name is at most 53/,
    ],
  },
] as const;

describe("ray-gpu preview --program", () => {
  it.each(CASES)("exits 1 for $name, naming the resource, the problem and the fix", async ({ program, named }) => {
    const r = await preview(project({ "index.js": program }));
    expect(r.status, r.stderr).toBe(1);
    for (const pattern of named) expect(r.stderr).toMatch(pattern);
    expect(r.stdout).toBe("");
  });

  it("exits 0 for the documented program (TypeScript through ts-node, the project's tsconfig honoured)", async () => {
    // docs/library.md's program as the consumer tests hold it, with a public CIDR of ours; noCheck in the tsconfig
    // turns ts-node's type check off, as `pulumi` does (transpileOnly), and keeps this test cheap.
    const program = readFileSync(join(repoRoot, "test/package/consumer/platform.ts"), "utf8").replace(
      /\["[\d./]+"\]/,
      '["52.94.76.0/22"]',
    );
    const tsconfig = JSON.parse(readFileSync(join(repoRoot, "test/package/tsconfigs/nodenext.json"), "utf8")) as {
      compilerOptions: Record<string, unknown>;
    };
    tsconfig.compilerOptions["noCheck"] = true;
    const dir = project({
      "index.ts": `${program}\nconst typeErrorLeftToTsc: number = "not checked";\n`,
      "tsconfig.json": JSON.stringify(tsconfig),
      "package.json": JSON.stringify({ name: "mine", main: "index.ts" }),
    });
    const r = await runCli(["preview", "--program", dir, "--json"]);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { resources: { type: string; name: string; dependsOn: string[] }[] };
    const job = doc.resources.find((x) => x.type === "kubernetes:ray.io/v1:RayJob")!;
    expect(job.name).toBe("llama-ddp-rayjob");
  });

  it("refuses a folder that is not a Pulumi project, as a usage error", async () => {
    const r = await preview(mkdtempSync(join(tmpdir(), "ray-gpu-empty-")));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("has no Pulumi.yaml");
  });
});
