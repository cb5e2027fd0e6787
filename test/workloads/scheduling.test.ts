/**
 * The deploy simulation's scheduler on whole stacks: the stacks as shipped pass; each broken fixture from a real
 * failure is refused with the pod named: a CPU pool too small for the platform's pods plus a head, heads Kueue admits
 * together that do not fit together, a GPU DaemonSet without the GPU taint's toleration, a node selector no node group
 * carries.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../core/errors";
import { planPlatform, type PlatformPlan } from "../../core/platform-plan";
import { planStack } from "../../workloads/stack";
import { schedulingIssues } from "../../workloads/scheduling";
import { planLayout } from "../../core/deploy/layout";
import { repoStack, runtime } from "../helpers/fixtures";
import type { StackConfig } from "../../core/config/stack";

/** The prod stack with its CPU pool resized. */
function prodWithCpuPool(minNodes: number, maxNodes: number): StackConfig {
  const c = repoStack("prod");
  return { ...c, platform: { ...c.platform, cpuNodeGroup: { ...c.platform.cpuNodeGroup, minNodes, maxNodes } } };
}

/** The messages of the ConfigError `fn` throws, one per problem. */
function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.issues.map((i) => `${i.path}: ${i.message}`);
    throw e;
  }
  return [];
}

/** The layout of `plan` with some releases replaced, as planPlatform would lay it out. */
function relaid(plan: PlatformPlan, helm: Partial<PlatformPlan["helm"]>) {
  return planLayout({
    pools: plan.pools,
    groups: [plan.nodeGroups.cpu, ...plan.nodeGroups.gpu],
    cluster: plan.cluster,
    helm: { ...plan.helm, ...helm },
    observability: plan.observability,
    queueing: plan.queue !== undefined,
  });
}

describe("scheduling simulation", () => {
  it.each(["dev", "prod"] as const)("passes the %s stack as shipped", (stack) => {
    expect(problems(() => planStack(repoStack(stack), { runtime, requireRender: true }))).toEqual([]);
  });

  it("refuses prod with one m6i.2xlarge as its CPU pool: the heads do not fit beside the platform's pods", () => {
    const found = problems(() => planStack(prodWithCpuPool(1, 1), { runtime, requireRender: true }));
    expect(found[0]).toMatch(/^ray-gpu:workloads\[1\]: pod embed-chunks\/head can never be scheduled/);
    expect(found[0]).toContain("it requests 6 CPU, 24 GiB; the roomiest node that may take it (system node 1) has");
    expect(found[0]).toContain("choose a larger platform.cpuNodeGroup.instanceType");
  });

  it("takes the platform's pods out of the CPU pool's quota: Kueue never admits a head that cannot land", () => {
    const one = planPlatform(prodWithCpuPool(1, 1));
    const quota = one.queue!.quotas.find((q) => q.role === "system")!;
    expect(quota.cpus).toBeLessThan(one.pools.cpu.podBudget.cpus);
    expect(quota.memoryGiB).toBeLessThan(one.pools.cpu.podBudget.memoryGiB);
    const names = (p: PlatformPlan) => p.layout.nodes.filter((n) => n.pool === "system").length;
    expect(names(one)).toBe(1);
  });

  it("refuses jobs Kueue admits at once that do not fit together, naming the pod left over", () => {
    // Four CPU nodes at most; embed-chunks on 4 GPUs and the inference pool at 12 nodes: llm-sweep is admitted with
    // the others, and the six heads fit the CPU pool's quota in CPUs summed but not node by node.
    const c = prodWithCpuPool(2, 4);
    const gpuNodeGroups = c.platform.gpuNodeGroups.map((g) =>
      g.name === "infer-a10g-1x" ? { ...g, maxNodes: 12 } : g,
    );
    const workloads = c.workloads.map((w) => (w.name === "embed-chunks" ? { ...w, gpus: 4 } : w));
    const config = { ...c, workloads, platform: { ...c.platform, gpuNodeGroups } };
    const found = problems(() => planStack(config, { runtime, requireRender: true }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(
      new RegExp(
        "Kueue admits llm-pretrain, embed-chunks, llm-sweep, sft-qwen2-vl, sft-llama-8b, sft-mistral-7b at once .* " +
          "but pod sft-mistral-7b/head then cannot",
      ),
    );
  });

  it("refuses a GPU DaemonSet without the GPU taint's toleration", () => {
    const plan = planPlatform(repoStack("prod"));
    const plugin = plan.helm.nvidiaDevicePlugin;
    const layout = relaid(plan, { nvidiaDevicePlugin: { ...plugin, values: { ...plugin.values, tolerations: [] } } });
    const found = schedulingIssues({ ...plan, layout }, [], undefined);
    expect(found.map((i) => i.path)).toEqual([
      "ray-gpu:platform.gpuNodeGroups[0]",
      "ray-gpu:platform.gpuNodeGroups[1]",
      "ray-gpu:platform.gpuNodeGroups[2]",
    ]);
    expect(found[0]!.message).toContain(
      "DaemonSet nvidia-device-plugin would not run on the nodes of GPU pool train-a10g-4x",
    );
    expect(found[0]!.message).toContain("never offers nvidia.com/gpu");
  });

  it("refuses an EFA device plugin that would not run on the EFA pool's nodes, and only there", () => {
    const plan = planPlatform(repoStack("prod"));
    const plugin = plan.helm.efaDevicePlugin!;
    const layout = relaid(plan, { efaDevicePlugin: { ...plugin, values: { ...plugin.values, tolerations: [] } } });
    const found = schedulingIssues({ ...plan, layout }, [], undefined);
    expect(found.map((i) => i.path)).toEqual(["ray-gpu:platform.gpuNodeGroups[2]"]);
    expect(found[0]!.message).toContain("DaemonSet aws-efa-k8s-device-plugin would not run on the nodes of GPU pool");
    expect(plan.layout.missingDaemonSets).toEqual([]);
  });

  it("refuses a platform pod whose node selector no node group carries", () => {
    const plan = planPlatform(repoStack("dev"));
    const op = plan.helm.kuberayOperator;
    const layout = relaid(plan, {
      kuberayOperator: { ...op, values: { ...op.values, nodeSelector: { pool: "gone" } } },
    });
    const found = schedulingIssues({ ...plan, layout }, [], undefined);
    expect(found).toEqual([
      {
        path: "ray-gpu:platform.cpuNodeGroup",
        message: expect.stringContaining(
          "platform pod kuberay-operator/kuberay-operator cannot be scheduled while pulumi up waits for it " +
            "(the pools at minNodes, beside the platform's other pods): no node matches its node selector (pool=gone)",
        ),
      },
    ]);
  });

  it("says an unschedulable Prometheus stays Pending after a deploy that succeeds, not that pulumi up fails", () => {
    const plan = planPlatform(repoStack("dev"));
    const kps = plan.observability!.helm.kubePrometheusStack;
    const values = kps.values as { prometheus: { prometheusSpec: Record<string, unknown> } };
    const moved = { ...values.prometheus.prometheusSpec, nodeSelector: { pool: "gone" } };
    const observability = {
      ...plan.observability!,
      helm: {
        ...plan.observability!.helm,
        kubePrometheusStack: {
          ...kps,
          values: { ...values, prometheus: { ...values.prometheus, prometheusSpec: moved } },
        },
      },
    };
    const layout = relaid({ ...plan, observability }, {});
    const [found] = schedulingIssues({ ...plan, layout }, [], undefined);
    expect(found!.message).toContain("platform pod kube-prometheus-stack/prometheus cannot be scheduled");
    expect(found!.message).toContain("so the deploy succeeds and Prometheus stays Pending");
    expect(found!.message).not.toContain("while pulumi up waits for it");
  });

  it("leaves no quota for heads when the platform's pods fill the CPU pool (one m6i.large), and refuses every head", () => {
    const c = repoStack("prod");
    const cpu = { ...c.platform.cpuNodeGroup, instanceType: "m6i.large" as const, minNodes: 1, maxNodes: 1 };
    const small = { ...c, platform: { ...c.platform, cpuNodeGroup: cpu } };
    const quota = planPlatform(small).queue!.quotas[0]!;
    expect(quota.pool).toBe("system");
    expect(quota.cpus).toBeLessThan(1);
    const found = problems(() => planStack(small, { runtime, requireRender: true }));
    expect(found).toHaveLength(6);
    expect(found.every((m) => m.includes("the Ray head of ray-gpu:workloads["))).toBe(true);
  });
});
