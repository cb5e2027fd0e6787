/**
 * GPU capacity beyond one instance type: L4 (g6) and L40S (g6e) pools plan with their own GPU's memory, and a pool
 * with `fallbackInstanceTypes` gets a node group per size, tried in order by the Cluster Autoscaler's priority
 * expander, one Kueue flavor over all of them, jobs planned on the least node of all the sizes, and prod refusing a
 * size a job would not fit.
 */
import { describe, expect, it } from "vitest";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import { ConfigError } from "../../../core/errors";
import { planPlatform } from "../../../core/platform-plan";
import { autoScalingGroupPattern } from "../../../core/platform/spot-fallback";
import { ACCELERATOR_LABEL_KEY, planPools, POOL_LABEL } from "../../../core/pools";
import { queueObjects } from "../../../workloads/queue/kueue";
import { planText } from "../../../cli/plan/text";
import { planStack } from "../../../workloads/stack";
import { configProblems, configWith, minimalConfig, runtime, type RawConfig } from "../../helpers/fixtures";

/** A LoRA fine-tune of Llama-2-13B in bf16, rank 16, 2,048 tokens, on `gpus` GPUs. */
const lora13b = (gpus: number) => ({
  kind: "LoRAFineTune",
  name: "lora-13b",
  model: "meta-llama/Llama-2-13b-hf",
  image: "example/sft:1",
  entrypoint: "python sft.py",
  gpus,
  sequenceLength: 2048,
  precision: "bf16-true",
  lora: { rank: 16, quantization: "none" },
});

/** A stack of one pool of `instanceType` (with fallbacks) running `workload`, in `environment`. */
function stack(pool: Record<string, unknown>, workload: Record<string, unknown>, environment = "dev"): RawConfig {
  const c = minimalConfig();
  c.environment = environment;
  c.platform.gpuNodeGroups = [{ name: "gpu", maxNodes: 2, ...pool }];
  c.platform["queueing"] = { enabled: true };
  c.workloads = Object.keys(workload).length ? [workload] : [];
  return c;
}
const planOf = (c: RawConfig) => {
  const config = configWith((raw) => Object.assign(raw, c));
  return planStack(config, { runtime }).workloads[0]!;
};

describe("L4 and L40S pools", () => {
  it("plan a 13B bf16 LoRA (rank 16, 2,048 tokens) as fitting on a g6e.xlarge and not on a g5.2xlarge", () => {
    const l40s = planOf(stack({ instanceType: "g6e.xlarge" }, lora13b(1)));
    const a10g = planOf(stack({ instanceType: "g5.2xlarge" }, lora13b(1)));
    expect([l40s.memory.fits, l40s.memory.memory.usableGiB]).toEqual([true, ACCELERATORS.L40S.cudaTotalGiB]);
    expect([a10g.memory.fits, a10g.memory.memory.usableGiB]).toEqual([false, ACCELERATORS.A10G.cudaTotalGiB]);
    // The weights alone (13.0 B parameters in bf16) are more than an A10G holds, less than an L40S.
    expect(a10g.memory.memory.requiredGiB).toBeGreaterThan(ACCELERATORS.A10G.cudaTotalGiB);
    expect(l40s.memory.memory.requiredGiB).toBeLessThanOrEqual(ACCELERATORS.L40S.cudaTotalGiB);
    // The reasons name the pool's GPU, not the A10G.
    const reason = (w: typeof l40s) => w.shape.decisions.find((d) => d.key === "env.PYTORCH_CUDA_ALLOC_CONF")!.reason;
    expect([reason(l40s), reason(a10g)]).toEqual([
      expect.stringMatching(/L40S has only ~44 GiB$/),
      expect.stringMatching(/A10G has only ~22 GiB$/),
    ]);
    expect(a10g.memory.advice[0]).toMatch(/but each A10G offers 21\.99 GiB$/);
  });

  it("plan a g6.2xlarge pool with the L4's memory, label and node", () => {
    const lora1b = { ...lora13b(1), name: "lora-1b", model: "meta-llama/Llama-3.2-1B" };
    const job = planOf(stack({ instanceType: "g6.2xlarge" }, lora1b));
    expect([job.memory.fits, job.memory.memory.usableGiB, job.instanceType]).toEqual([
      true,
      ACCELERATORS.L4.cudaTotalGiB,
      "g6.2xlarge",
    ]);
    const pool = planPools(configWith((c) => Object.assign(c, stack({ instanceType: "g6.2xlarge" }, {}))).platform)
      .gpu[0]!;
    expect(pool.labels[ACCELERATOR_LABEL_KEY]).toBe("nvidia-l4");
  });
});

describe("a g5.12xlarge pool with fallbackInstanceTypes [g6.12xlarge]", () => {
  const raw = stack(
    { instanceType: "g5.12xlarge", fallbackInstanceTypes: ["g6.12xlarge"] },
    minimalConfig().workloads[0]!,
  );
  const config = configWith((c) => Object.assign(c, raw));
  const platform = planPlatform(config);

  it("makes a node group per size, the g6 one from 0 nodes with the L4's label and the NVIDIA AMI", () => {
    expect(
      platform.nodeGroups.gpu.map((g) => [
        g.name,
        g.instanceTypes,
        g.amiType,
        g.scaling.minSize,
        g.labels[ACCELERATOR_LABEL_KEY],
      ]),
    ).toEqual([
      ["gpu", ["g5.12xlarge"], "AL2023_x86_64_NVIDIA", 0, "nvidia-a10g"],
      ["gpu-g6-12xlarge", ["g6.12xlarge"], "AL2023_x86_64_NVIDIA", 0, "nvidia-l4"],
    ]);
    const [g5, g6] = platform.nodeGroups.gpu;
    expect(g6!.labels["ray-gpu.io/pool"]).toBe(g5!.labels["ray-gpu.io/pool"]);
    expect(g6!.autoscalerTags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"]).toBe("4");
  });

  it("has the autoscaler try the g5 group before the g6 one (priority expander), every other group last", () => {
    const values = platform.helm.clusterAutoscaler.values as {
      extraArgs: Record<string, string>;
      expanderPriorities: Record<string, string[]>;
    };
    expect(values.extraArgs["expander"]).toBe("priority,least-waste");
    expect(values.expanderPriorities).toEqual({ "20": [autoScalingGroupPattern("gpu")], "10": [".*"] });
  });

  it("gives Kueue one flavor for the pool, selected by the pool label alone, so a job is admitted on either size", () => {
    const plan = planStack(config, { runtime });
    const objects = queueObjects(plan.queue!.plan, {});
    const flavors = objects.filter((o) => o.kind === "ResourceFlavor") as { spec: { nodeLabels: object } }[];
    expect(flavors.map((f) => f.spec.nodeLabels)).toEqual([{ [POOL_LABEL]: "system" }, { [POOL_LABEL]: "gpu" }]);
    // The quota: maxNodes Ray pods of the least node, whichever size each node is.
    const quota = plan.queue!.plan.quotas.find((q) => q.pool === "gpu")!;
    const pool = planPools(config.platform).gpu[0]!;
    expect([quota.gpus, quota.cpus]).toEqual([2 * 4, 2 * pool.podBudget.cpus]);
    expect(plan.queue!.admission.admitted).toEqual(["train"]);
  });

  it("plans each job on the least node of both sizes, naming the size that binds", () => {
    const job = planStack(config, { runtime }).workloads[0]!;
    expect(job.fallback).toEqual({
      instanceTypes: ["g5.12xlarge", "g6.12xlarge"],
      gpuMemoryBindsOn: "g5.12xlarge",
      misfits: [],
    });
    expect(job.memory.memory.usableGiB).toBe(Math.min(ACCELERATORS.A10G.cudaTotalGiB, ACCELERATORS.L4.cudaTotalGiB));
    const pool = planPools(config.platform).gpu[0]!;
    const alone = (t: string) =>
      planPools(configWith((c) => Object.assign(c, stack({ instanceType: t }, {}))).platform);
    const budgets = ["g5.12xlarge", "g6.12xlarge"].map((t) => alone(t).gpu[0]!.podBudget);
    expect(pool.podBudget).toEqual({
      cpus: Math.min(...budgets.map((b) => b.cpus)),
      memoryGiB: Math.min(...budgets.map((b) => b.memoryGiB)),
      gpus: 4,
    });
  });
});

describe("fallback sizes a job would not fit", () => {
  const pool = { instanceType: "g6e.xlarge", fallbackInstanceTypes: ["g5.2xlarge"] };

  it("are refused in prod, naming the size and the way out", () => {
    const c = stack(pool, lora13b(1), "prod");
    let error: unknown;
    try {
      planOf(c);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues;
    expect(issues.map((i) => [i.path, i.value])).toEqual([
      ["ray-gpu:platform.gpuNodeGroups[0].fallbackInstanceTypes[0]", "g5.2xlarge"],
    ]);
    expect(issues[0]!.message).toMatch(/remove g5\.2xlarge from fallbackInstanceTypes/);
  });

  it("are planned on the pool's own size in dev, with the misfit named", () => {
    const job = planOf(stack(pool, lora13b(1)));
    expect([job.memory.fits, job.memory.memory.usableGiB]).toEqual([true, ACCELERATORS.L40S.cudaTotalGiB]);
    expect(job.fallback?.misfits).toEqual(["g5.2xlarge"]);
    const config = configWith((raw) => Object.assign(raw, stack(pool, lora13b(1))));
    const text = planText("dev", planStack(config, { runtime }), 400);
    expect(text).toMatch(/GPU memory: fits: .* on g6e\.xlarge, the pool's own size\n/);
    expect(text).toMatch(
      / {2}! does not fit in GPU memory on g5\.2xlarge, a fallback of pool gpu: .*prod refuses this/,
    );
  });
});

describe("the grammar of fallbackInstanceTypes", () => {
  it("takes other catalog sizes with as many GPUs per node, once each, with the queue on", () => {
    const raw = stack(
      { instanceType: "g5.12xlarge", fallbackInstanceTypes: ["g5.12xlarge", "g6.xlarge", "g6.12xlarge"] },
      {},
    );
    raw.platform["queueing"] = { enabled: false };
    const problems = configProblems(raw);
    expect(problems).toMatch(/fallbackInstanceTypes\[0\].*is the pool's own instanceType/);
    expect(problems).toMatch(/fallbackInstanceTypes\[1\].*has 1 GPU\(s\) per node and g5\.12xlarge has 4/);
    const twice = stack({ instanceType: "g5.12xlarge", fallbackInstanceTypes: ["g6.12xlarge", "g6.12xlarge"] }, {});
    expect(configProblems(twice)).toMatch(/fallbackInstanceTypes\[1\].*is listed twice/);
    expect(problems).toMatch(/fallbackInstanceTypes.*needs platform\.queueing\.enabled: true/);
    expect(configProblems(stack({ instanceType: "g5.12xlarge", fallbackInstanceTypes: ["g7.12xlarge"] }, {}))).toMatch(
      /fallbackInstanceTypes\[0\]/,
    );
  });

  it("refuses a pool name whose fallback group EKS could not hold", () => {
    const long = "p".repeat(30);
    const c = stack({ instanceType: "g5.12xlarge", fallbackInstanceTypes: ["g6e.12xlarge"] }, {});
    (c.platform.gpuNodeGroups[0] as { name: string }).name = long;
    c.workloads = [];
    expect(configProblems(c)).toMatch(new RegExp(`makes the fallback node group "${long}-g6e-12xlarge"`));
  });
});
