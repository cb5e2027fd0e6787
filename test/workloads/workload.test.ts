import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/errors";
import { adviceText } from "../../core/memory/advice-text";
import { stableYaml } from "../../core/serialize";
import { TrainingJob } from "../../workloads/workload";
import { planStack } from "../../workloads/stack";
import { planPools } from "../../core/pools";
import { repoStack, runtime } from "../helpers/fixtures";

describe("TrainingJob", () => {
  const dev = repoStack("dev");
  const ctx = { environment: "dev" as const, pools: planPools(dev.platform), namespace: "ray-jobs", runtime };

  it("re-plans offloading that needs more host memory than the worker has: more GPUs, or roomier g5 sizes", () => {
    const plan = new TrainingJob({
      kind: "TrainingJob",
      name: "big",
      model: "Qwen/Qwen2.5-14B",
      gpus: 4,
      instanceType: "g5.12xlarge",
      sequenceLength: 512,
      zeroStage: 3,
      offload: "optimizer-and-parameters",
    }).plan(ctx);
    expect(plan.memory.fits).toBe(false);
    const advice = plan.memory.advice.join("\n");
    expect(advice).toMatch(
      /does not fit in host memory: offloading needs [\d.]+ GiB per node .* but the worker has \d+ GiB/,
    );
    expect(advice).toMatch(/use gpus: \d+ \(offload then needs [\d.]+ GiB per node\)/);
    // Only sizes with more RAM per GPU than the pool's g5.12xlarge (48 GiB) are offered, never the pool's own.
    expect(advice).toMatch(/g5\.24xlarge \(96 GiB RAM per GPU\)/);
    expect(advice).not.toMatch(/g5\.12xlarge \(\d/);
    // One sentence: the finding, then each way out joined once ("; or "), none cut short.
    expect(adviceText(plan.memory.advice)).toMatch(
      /^does not fit in host memory: .*; use gpus: \d+ .*; or use a pool of .* \(g5\.12xlarge has 48 GiB RAM per GPU\)$/,
    );
    expect(adviceText(plan.memory.advice)).not.toMatch(/\bor or\b/);
  });

  it("renders a DDP job end to end: head on the CPU pool, workers on the GPU pool", () => {
    const job = new TrainingJob({
      kind: "TrainingJob",
      name: "ddp",
      model: "meta-llama/Llama-3.2-1B",
      image: "img:1",
      entrypoint: "python train.py",
      gpus: 8,
      nodePool: "a10g-4x",
    });
    const rayJob = job.render(ctx).find((o) => o.kind === "RayJob");
    expect(rayJob?.kind).toBe("RayJob");
    if (rayJob?.kind !== "RayJob") return;
    const { headGroupSpec, workerGroupSpecs } = rayJob.spec.rayClusterSpec;
    expect(headGroupSpec.rayStartParams["num-cpus"]).toBe("0");
    expect(headGroupSpec.template.spec.nodeSelector).toEqual({ "ray-gpu.io/pool": "system" });
    expect(headGroupSpec.template.spec.containers[0]!.resources.limits).not.toHaveProperty("nvidia.com/gpu");
    const w = workerGroupSpecs[0]!;
    expect([w.replicas, w.minReplicas, w.maxReplicas]).toEqual([2, 2, 2]);
    const c = w.template.spec.containers[0]!;
    expect(c.resources.requests).toEqual(c.resources.limits);
    expect(c.resources.limits).toEqual({ cpu: "47", memory: "168Gi", "nvidia.com/gpu": "4" });
    expect(w.template.spec.volumes).toContainEqual({ name: "dshm", emptyDir: { medium: "Memory", sizeLimit: "41Gi" } });
    expect(w.rayStartParams).toEqual({
      "object-store-memory": String(33 * 2 ** 30),
      "object-spilling-directory": "/mnt/ray-spill",
    });
    expect(c.env).toContainEqual({ name: "PYTORCH_CUDA_ALLOC_CONF", value: "expandable_segments:True" });
    // The planner's knobs reach the user's code on every container.
    const plan = job.plan(ctx);
    expect(c.env).toContainEqual({
      name: "RAY_GPU_MICRO_BATCH_SIZE",
      value: String(plan.memory.knobs["microBatchSize"]),
    });
    expect(headGroupSpec.template.spec.containers[0]!.env).toContainEqual({
      name: "RAY_GPU_ZERO_STAGE",
      value: String(plan.memory.knobs["zeroStage"]),
    });
    expect(rayJob.spec).toMatchObject({ shutdownAfterJobFinishes: true, ttlSecondsAfterFinished: 0, backoffLimit: 0 });
  });

  it("passes user env vars through and refuses names the planner sets", () => {
    const base = {
      kind: "TrainingJob" as const,
      name: "ddp",
      model: "Qwen/Qwen2.5-0.5B",
      image: "img:1",
      entrypoint: "x",
      gpus: 1,
      nodePool: "a10g-1x",
    };
    const rayJob = new TrainingJob({ ...base, env: { WANDB_PROJECT: "p" } })
      .render(ctx)
      .find((o) => o.kind === "RayJob");
    if (rayJob?.kind !== "RayJob") throw new Error("no RayJob");
    expect(rayJob.spec.rayClusterSpec.workerGroupSpecs[0]!.template.spec.containers[0]!.env).toContainEqual({
      name: "WANDB_PROJECT",
      value: "p",
    });
    expect(
      () => new TrainingJob({ ...base, env: { NCCL_SOCKET_IFNAME: "ens5", RAY_GPU_STORAGE_BUCKET: "b" } }),
    ).toThrow(
      '2 problems\n  ✖ TrainingJob "ddp".env.NCCL_SOCKET_IFNAME: NCCL_* is set by pulumi-ray-gpu (the NCCL ' +
        "settings of the plan) on every Ray container (docs/tuning.md); choose another name",
    );
  });

  it("rejects an invalid spec with every bad field", () => {
    expect(
      () => new TrainingJob({ kind: "TrainingJob", name: "Bad Name", image: "", entrypoint: "x", gpus: 0 } as never),
    ).toThrow(ConfigError);
    expect(
      () =>
        new TrainingJob({
          kind: "TrainingJob",
          name: "ok",
          image: "i",
          entrypoint: "x",
          gpus: 1.5,
          strategy: "fsdp",
        } as never),
    ).toThrow(
      '3 problems\n  ✖ TrainingJob "ok".model: required (got (missing))\n  ✖ TrainingJob "ok".gpus: expected int ' +
        '(got 1.5)\n  ✖ TrainingJob "ok".strategy: must be one of "ddp", "deepspeed", "auto" (got "fsdp")',
    );
  });

  it("picks the pool by instance type, and rejects a pool that does not exist", () => {
    const byType = new TrainingJob({
      kind: "TrainingJob",
      name: "t",
      model: "meta-llama/Llama-3.2-1B",
      image: "i",
      entrypoint: "x",
      gpus: 2,
      instanceType: "g5.2xlarge",
    }).plan(ctx);
    expect(byType.nodePool).toBe("a10g-1x");
    expect(() =>
      new TrainingJob({
        kind: "TrainingJob",
        name: "t",
        model: "meta-llama/Llama-3.2-1B",
        image: "i",
        entrypoint: "x",
        gpus: 2,
        nodePool: "h100",
      }).plan(ctx),
    ).toThrow(
      'TrainingJob "t".nodePool: no GPU pool has this name; pools are "a10g-4x" (g5.12xlarge), "a10g-1x" (g5.2xlarge) (got "h100")',
    );
  });

  const workloads = ["llm-pretrain", "embed-chunks", "llm-sweep", "sft-qwen2-vl", "sft-llama-8b", "sft-mistral-7b"];
  it.each((["dev", "prod"] as const).flatMap((env) => workloads.map((w) => [env, w] as const)))(
    "renders %s %s (one snapshot per workload and environment)",
    async (env, workload) => {
      const plan = planStack(repoStack(env), { runtime });
      // The runtime package's ConfigMap is checked in runtime.test.ts; its content-addressed name shows as <hash>
      // here, so Python edits do not churn every snapshot.
      const text = plan.objects
        .find((o) => o.workload === workload)!
        .objects.map((o) => stableYaml(o))
        .join("---\n")
        .replace(/ray-gpu-runtime-[0-9a-f]{10}/g, "ray-gpu-runtime-<hash>");
      await expect(text).toMatchFileSnapshot(`__snapshots__/${env}/${workload}.yaml`);
    },
  );
});

describe("the plan's digest", () => {
  it("is the digest each tuning document carries, for every workload of both stacks", () => {
    for (const stack of ["dev", "prod"] as const) {
      const plan = planStack(repoStack(stack), { runtime });
      for (const { workload, objects } of plan.objects) {
        const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === `${workload}-tuning`);
        const carried = JSON.parse((cm as { data: Record<string, string> }).data["tuning.json"]!).workload.planDigest;
        expect(plan.workloads.find((w) => w.name === workload)!.planDigest, `${stack} ${workload}`).toBe(carried);
      }
      expect(plan.objects.length).toBeGreaterThan(0);
    }
  });

  it("changes with what the job receives, and only then", () => {
    const digests = (edit: (w: Record<string, unknown>) => void) => {
      const config = repoStack("dev");
      edit(config.workloads[0] as unknown as Record<string, unknown>);
      return planStack(config, { runtime }).workloads.map((w) => w.planDigest);
    };
    const base = digests(() => {});
    expect(digests(() => {})).toEqual(base);
    const moreGpus = digests((w) => (w["gpus"] = (w["gpus"] as number) * 2));
    expect(moreGpus[0]).not.toBe(base[0]);
    expect(moreGpus.slice(1)).toEqual(base.slice(1));
  });
});
