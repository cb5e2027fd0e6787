/**
 * Each job's forecast as the plan makes it: every example workload of both stacks has one; the work scales the time
 * as it should (twice the rows, about twice the time; twice an embedding pipeline's GPUs, clearly less); a spec that
 * says too little gets a reason, and work that contradicts itself a clear error.
 */
import { describe, expect, it } from "vitest";
import { planStack } from "../../workloads/stack";
import type { StackConfig } from "../../core/config/stack";
import { FORECAST_BOUNDS } from "../../core/forecast/types";
import { configProblems, configWith, minimalConfig, repoStack, runtime } from "../helpers/fixtures";

const plan = (config: StackConfig) => planStack(config, { runtime });
const forecastOf = (config: StackConfig, name: string) => {
  const w = plan(config).workloads.find((x) => x.name === name)!;
  return w.forecast;
};

/** `name` of the repo's `stack` with `change` applied to its spec. */
function withWorkload(stack: "dev" | "prod", name: string, change: (w: Record<string, unknown>) => object) {
  const config = repoStack(stack);
  const workloads = config.workloads.map((w) => (w.name === name ? change(w as Record<string, unknown>) : w));
  return { ...config, workloads } as StackConfig;
}

describe("every example job of both stacks has a complete forecast", () => {
  it.each(["dev", "prod"] as const)("%s", (stack) => {
    for (const w of plan(repoStack(stack)).workloads) {
      const f = w.forecast.forecast;
      expect(f, `${w.name}: ${w.forecast.unavailable}`).toBeDefined();
      expect(f!.wallSeconds).toBeGreaterThan(f!.startupSeconds);
      expect(f!.gpuHours).toBeCloseTo((f!.wallSeconds * w.gpus) / 3600, 1);
      expect(f!.costUsd).toBeGreaterThan(0);
      expect(f!.gpuUtilization).toBeGreaterThan(0);
      expect(f!.gpuUtilization).toBeLessThanOrEqual(1);
      expect(FORECAST_BOUNDS).toContain(f!.bound);
      expect(f!.work.count).toBeGreaterThan(0);
    }
  });
});

describe("the work sets the time", () => {
  const work = (f: ReturnType<typeof forecastOf>) => f.forecast!.wallSeconds - f.forecast!.startupSeconds;

  it.each([
    [
      "sft-llama-8b",
      (w: Record<string, unknown>) => ({ ...w, epochs: 4 }),
      (w: Record<string, unknown>) => ({ ...w, epochs: 8 }),
    ],
    [
      "llm-pretrain",
      (w: Record<string, unknown>) => ({ ...w, steps: 1000 }),
      (w: Record<string, unknown>) => ({ ...w, steps: 2000 }),
    ],
  ])("%s: twice the work is twice the time and cost, to a step", (name, once, twice) => {
    const a = forecastOf(withWorkload("prod", name, once), name);
    const b = forecastOf(withWorkload("prod", name, twice), name);
    expect(b.forecast!.work.count).toBe(2 * a.forecast!.work.count);
    expect(work(b) / work(a)).toBeCloseTo(2, 2);
    expect(b.forecast!.costUsd / a.forecast!.costUsd).toBeGreaterThan(1.95);
  });

  it.each(["embed-chunks", "llm-sweep"])("%s: twice the rows, about twice the time", (name) => {
    const rows = (n: number) => (w: Record<string, unknown>) => ({
      ...w,
      dataset: { ...(w.dataset as object), rows: n },
    });
    const a = forecastOf(withWorkload("prod", name, rows(1_000_000)), name);
    const b = forecastOf(withWorkload("prod", name, rows(2_000_000)), name);
    expect(work(b) / work(a)).toBeGreaterThan(1.9);
    expect(work(b) / work(a)).toBeLessThan(2.1);
  });

  it("twice an embedding pipeline's GPUs takes clearly less time, at about the same GPU-hours", () => {
    const gpus = (n: number) => (w: Record<string, unknown>) => ({ ...w, gpus: n });
    const four = forecastOf(withWorkload("prod", "embed-chunks", gpus(4)), "embed-chunks").forecast!;
    const eight = forecastOf(withWorkload("prod", "embed-chunks", gpus(8)), "embed-chunks").forecast!;
    expect(eight.wallSeconds / four.wallSeconds).toBeLessThan(0.6);
    expect(eight.gpuHours / four.gpuHours).toBeGreaterThan(0.9);
    expect(eight.gpuHours / four.gpuHours).toBeLessThan(1.1);
  });

  it("dev reads devSampleFraction of an embedding dataset: a hundredth of the rows", () => {
    const dev = forecastOf(repoStack("dev"), "embed-chunks").forecast!;
    expect(dev.work).toMatchObject({ unit: "rows", count: 400_000 });
    expect(dev.work.from).toBe("dataset.rows × devSampleFraction 0.01 = 400000");
  });

  it("a generation averaging half the limit decodes about half as long", () => {
    const full = forecastOf(repoStack("prod"), "llm-sweep").forecast!;
    const half = forecastOf(
      withWorkload("prod", "llm-sweep", (w) => ({ ...w, avgNewTokens: 256 })),
      "llm-sweep",
    ).forecast!;
    expect(half.wallSeconds).toBeLessThan(0.65 * full.wallSeconds);
  });

  it("32 GPUs of full training over TCP wait on the network: bound by it, the GPUs computing under half the run", () => {
    // On the g5.12xlarge pool (40 Gbps, 8 nodes) rather than the EFA pool the stack gives it.
    const tcp = withWorkload("prod", "llm-pretrain", (w) => ({ ...w, nodePool: "train-a10g-4x" }));
    const f = forecastOf(tcp, "llm-pretrain").forecast!;
    expect(f.bound).toBe("network");
    expect(f.gpuUtilization).toBeLessThan(0.5);
    expect(f.waitShare).toBeGreaterThan(0.5);
  });
});

describe("what the spec does not say", () => {
  it("a training job without rows or steps gets no forecast, and the reason", () => {
    const c = configWith(() => undefined);
    expect(plan(c).workloads[0]!.forecast).toEqual({
      unavailable:
        "the spec does not say how much the job trains: set dataset.rows (and epochs, default 1) or steps to forecast",
    });
  });

  it("refuses steps with epochs, and an average generation over the limit, each at its path", () => {
    const raw = minimalConfig();
    raw.workloads[0] = { ...raw.workloads[0]!, steps: 100, epochs: 2 };
    raw.workloads.push({
      kind: "BatchInference",
      name: "gen",
      model: "meta-llama/Llama-3.2-1B",
      gpus: 1,
      maxNewTokens: 256,
      avgNewTokens: 300,
    });
    const message = configProblems(raw);
    expect(message).toMatch(/workloads\[0\]\.steps.*give steps or epochs, not both/);
    expect(message).toMatch(/workloads\[1\]\.avgNewTokens.*must be at most maxNewTokens \(256\)/);
  });
});

describe("EFA between nodes", () => {
  /** The repo's prod stack with its EFA pool's `efa` set as given. */
  function prodWithEfa(efa: boolean): StackConfig {
    const config = repoStack("prod");
    const gpuNodeGroups = config.platform.gpuNodeGroups.map((g) =>
      g.name === "efa-a10g-8x" ? { ...g, efa, clusterPlacementGroup: true } : g,
    );
    return { ...config, platform: { ...config.platform, gpuNodeGroups } };
  }

  it("lifts the 32-GPU job's forecast GPU utilization above the same pool over TCP, for less time and cost", () => {
    const efa = forecastOf(prodWithEfa(true), "llm-pretrain").forecast!;
    const tcp = forecastOf(prodWithEfa(false), "llm-pretrain").forecast!;
    expect(efa.gpuUtilization).toBeGreaterThan(tcp.gpuUtilization);
    expect(efa.waitShare).toBeLessThan(tcp.waitShare);
    expect(efa.wallSeconds).toBeLessThan(tcp.wallSeconds);
    expect(efa.costUsd).toBeLessThan(tcp.costUsd);
  });

  it("shows the job's step at 8, 16 and 32 GPUs over each network, EFA ahead wherever the step crosses nodes", () => {
    const scaling = forecastOf(prodWithEfa(true), "llm-pretrain").forecast!.scaling!;
    expect(scaling.map((p) => [p.gpus, p.nodes, p.transport])).toEqual([
      [8, 1, "tcp"],
      [16, 2, "tcp"],
      [16, 2, "efa"],
      [32, 4, "tcp"],
      [32, 4, "efa"],
    ]);
    for (const gpus of [16, 32]) {
      const [tcp, efa] = ["tcp", "efa"].map((t) => scaling.find((p) => p.gpus === gpus && p.transport === t)!);
      expect(efa!.gpuUtilization, `${gpus} GPUs`).toBeGreaterThan(tcp!.gpuUtilization);
      expect(efa!.allReduceShare, `${gpus} GPUs`).toBeLessThan(tcp!.allReduceShare);
    }
    // The same global batch over more GPUs: fewer micro-batches each, a shorter step, a larger share of collectives.
    const tcp = scaling.filter((p) => p.transport === "tcp");
    expect(tcp.map((p) => p.gradientAccumulation)).toEqual([4, 2, 1]);
    expect(tcp.map((p) => p.stepSeconds)).toEqual([...tcp.map((p) => p.stepSeconds)].sort((a, b) => b - a));
    expect(tcp.map((p) => p.allReduceShare)).toEqual([...tcp.map((p) => p.allReduceShare)].sort((a, b) => a - b));
  });

  it("gives the job's own step the network its workers have: its forecast is the scaling row of its size and network", () => {
    const f = forecastOf(prodWithEfa(true), "llm-pretrain").forecast!;
    const own = f.scaling!.find((p) => p.gpus === 32 && p.transport === "efa")!;
    expect(f.unitSeconds).toBeCloseTo(own.stepSeconds, 2);
    const tcp = forecastOf(prodWithEfa(false), "llm-pretrain").forecast!;
    expect(tcp.unitSeconds).toBeCloseTo(
      tcp.scaling!.find((p) => p.gpus === 32 && p.transport === "tcp")!.stepSeconds,
      2,
    );
  });
});
