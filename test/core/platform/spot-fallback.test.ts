/**
 * A spot-with-fallback pool, planned: two node groups (spot first, on-demand from 0), named so that an on-demand pool
 * turned into one replaces nothing; the Cluster Autoscaler told to prefer the spot group and give up on it after the
 * wait; the queue quota once; the deploy simulation and the job shapes on the two groups.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { SPOT_WAIT_MINUTES } from "../../../core/config/platform";
import { capacityCostNote, planPools } from "../../../core/pools";
import { planGpuNodeGroups, type NodeGroupPlan } from "../../../core/platform/node-groups";
import { planPlatform } from "../../../core/platform-plan";
import { WAIT_FOR_PODS_READY_MINUTES } from "../../../core/platform/queueing";
import { autoScalingGroupPattern } from "../../../core/platform/spot-fallback";
import { REPLACEMENT } from "../../../cli/diff/replacement";
import { planStack } from "../../../workloads/stack";
import { keysNotInChart } from "../../helpers/helm-values";
import { configWith, repoStack, runtime } from "../../helpers/fixtures";
import { FALLBACK_POOL, prodWithFallback } from "../../helpers/spot-fallback";

const CA_VALUES = resolve(__dirname, "../../fixtures/cluster-autoscaler-9.59.0/values.yaml");
const CAPACITY_TEMPLATE_TAG = "k8s.io/cluster-autoscaler/node-template/label/eks.amazonaws.com/capacityType";
const groupsOf = (groups: readonly NodeGroupPlan[], pool: string) => groups.filter((g) => g.pool === pool);

describe("a spot-with-fallback pool's node groups", () => {
  const fallback = planPlatform(prodWithFallback());
  const [spot, onDemand] = groupsOf(fallback.nodeGroups.gpu, FALLBACK_POOL) as [NodeGroupPlan, NodeGroupPlan];

  it("are two, spot then on-demand, alike but for their name, capacity, fewest nodes and template label", () => {
    expect(fallback.nodeGroups.gpu.map((g) => [g.name, g.capacityType, g.scaling.minSize, g.scaling.maxSize])).toEqual([
      ["train-a10g-4x-spot", "SPOT", 0, 8],
      ["train-a10g-4x", "ON_DEMAND", 0, 8],
      ["infer-a10g-1x", "ON_DEMAND", 0, 8],
      ["efa-a10g-8x", "ON_DEMAND", 0, 4],
    ]);
    const { name: _a, capacityType: _b, autoscalerTags: spotTags, ...spotRest } = spot;
    const { name: _c, capacityType: _d, autoscalerTags: onDemandTags, ...onDemandRest } = onDemand;
    expect(spotRest).toEqual(onDemandRest);
    expect(spot.labels).toMatchObject({ "ray-gpu.io/pool": FALLBACK_POOL });
    expect([spotTags[CAPACITY_TEMPLATE_TAG], onDemandTags[CAPACITY_TEMPLATE_TAG]]).toEqual(["SPOT", "ON_DEMAND"]);
    const { [CAPACITY_TEMPLATE_TAG]: _e, ...spotOther } = spotTags;
    const { [CAPACITY_TEMPLATE_TAG]: _f, ...onDemandOther } = onDemandTags;
    expect(spotOther).toEqual(onDemandOther);
  });

  it("keep the pool's minNodes on spot and start the on-demand group at 0", () => {
    const config = configWith((c) => {
      c.platform.gpuNodeGroups[0] = { ...c.platform.gpuNodeGroups[0], capacityType: "spot-with-fallback", minNodes: 2 };
    });
    const pool = planPools(config.platform).gpu[0]!;
    const groups = planGpuNodeGroups(pool, { clusterName: "c", environment: "dev" });
    expect(groups.map((g) => [g.capacityType, g.scaling])).toEqual([
      ["SPOT", { minSize: 2, maxSize: 4, desiredSize: 2 }],
      ["ON_DEMAND", { minSize: 0, maxSize: 4, desiredSize: 0 }],
    ]);
  });

  it("keep the on-demand group of an on-demand pool turned into one: no input that replaces a node group changes", () => {
    const before = groupsOf(planPlatform(repoStack("prod")).nodeGroups.gpu, FALLBACK_POOL);
    expect(before).toHaveLength(1);
    const forceNew = REPLACEMENT["aws:eks/nodeGroup:NodeGroup"]!.replaceOn;
    // The component's inputs that a replaceOn path names, as the plan sets them (`nodeGroupNamePrefix` is `<name>-`).
    const replacing = (g: NodeGroupPlan) => ({
      nodeGroupNamePrefix: `${g.name}-`,
      amiType: g.amiType,
      capacityType: g.capacityType,
      instanceTypes: g.instanceTypes,
      subnets: g.availabilityZone,
    });
    expect(forceNew).toEqual(expect.arrayContaining(["nodeGroupNamePrefix", "capacityType", "instanceTypes"]));
    expect(replacing(onDemand)).toEqual(replacing(before[0]!));
    expect(new Set(fallback.nodeGroups.gpu.map((g) => g.name)).size).toBe(fallback.nodeGroups.gpu.length);
  });
});

describe("the Cluster Autoscaler with a spot-with-fallback pool", () => {
  const values = (config = prodWithFallback()) => planPlatform(config).helm.clusterAutoscaler.values;

  it("prefers the pool's spot group, ties to least-waste, and gives up on a spot node after the wait", () => {
    const v = values();
    expect(v["extraArgs"]).toMatchObject({ expander: "priority,least-waste", "max-node-provision-time": "10m" });
    expect(v["expanderPriorities"]).toEqual({ "20": ["^eks-train-a10g-4x-spot-[0-9a-f]{26}-"], "10": [".*"] });
    expect(
      (values(prodWithFallback(SPOT_WAIT_MINUTES.min))["extraArgs"] as Record<string, string>)[
        "max-node-provision-time"
      ],
    ).toBe("5m");
  });

  it("matches the spot group's Auto Scaling group (eks-<node group>-<uuid>) and no other group of the pool", () => {
    const suffix = "20261201120000123400000001";
    const re = new RegExp(autoScalingGroupPattern(`${FALLBACK_POOL}-spot`));
    expect(re.test(`eks-${FALLBACK_POOL}-spot-${suffix}-5ec2b6d7-0e4c-4a5e-9d1f-2b3c4d5e6f70`)).toBe(true);
    expect(re.test(`eks-${FALLBACK_POOL}-${suffix}-5ec2b6d7-0e4c-4a5e-9d1f-2b3c4d5e6f70`)).toBe(false);
    expect(re.test(`eks-${FALLBACK_POOL}-spot-1-${suffix}-5ec2b6d7`)).toBe(false);
  });

  it("sets only keys the chart has, and leaves a stack without a fallback pool as it was", () => {
    const chart = parse(readFileSync(CA_VALUES, "utf8")) as Record<string, unknown>;
    expect(keysNotInChart(chart, values(), ["nodeSelector", "extraArgs", "expanderPriorities"])).toEqual([]);
    const plain = values(repoStack("prod"));
    expect(plain["expanderPriorities"]).toBeUndefined();
    expect(plain["extraArgs"]).toMatchObject({ expander: "least-waste" });
    expect(plain["extraArgs"]).not.toHaveProperty("max-node-provision-time");
    expect(planPlatform(repoStack("prod")).spotFallback).toBeUndefined();
  });

  it("waits at most long enough for an on-demand node to still start within Kueue's waitForPodsReady", () => {
    const gpuNodeStartMinutes = 5;
    expect(SPOT_WAIT_MINUTES.max + gpuNodeStartMinutes).toBeLessThanOrEqual(WAIT_FOR_PODS_READY_MINUTES);
    expect(SPOT_WAIT_MINUTES.default).toBeGreaterThanOrEqual(SPOT_WAIT_MINUTES.min);
    expect(SPOT_WAIT_MINUTES.default).toBeLessThanOrEqual(SPOT_WAIT_MINUTES.max);
  });
});

describe("what a pool may cost at max, by capacity type", () => {
  it("bounds spot and spot-with-fallback by the on-demand price of every node, and says nothing of on-demand", () => {
    const pool = { maxNodes: 8, usdPerHourAtMax: 45.376, spotWaitMinutes: 7 };
    expect(capacityCostNote({ ...pool, capacityType: "on-demand" })).toBe("");
    expect(capacityCostNote({ ...pool, capacityType: "spot" })).toBe(
      "spot: the price varies, at most $45.38/h (the on-demand price caps it)",
    );
    expect(capacityCostNote({ ...pool, capacityType: "spot-with-fallback" })).toBe(
      "spot first (the price varies), on demand when spot has no node within 7 min: at most $45.38/h with all 8 " +
        "nodes on demand",
    );
  });
});

describe("the prod stack with a spot-with-fallback pool, planned whole", () => {
  const prod = planStack(repoStack("prod"), { runtime });
  const fallback = planStack(prodWithFallback(), { runtime });

  it("passes the deploy simulation, the GPU DaemonSets on both groups, with the pool's quota once", () => {
    // planStack throws on a platform pod or job pod no node takes; the layout counts the pool's maxNodes once.
    expect(fallback.queue!.plan.quotas).toEqual(prod.queue!.plan.quotas);
    expect(fallback.queue!.admission).toEqual(prod.queue!.admission);
    const platform = planPlatform(prodWithFallback());
    expect(platform.layout.missingDaemonSets).toEqual([]);
    expect(platform.layout.nodes.filter((n) => n.pool === FALLBACK_POOL)).toHaveLength(8);
  });

  it("marks the jobs on the pool as possibly on spot (the trainer's restarts count on it), and no other", () => {
    const spot = Object.fromEntries(fallback.workloads.map((w) => [w.name, w.shape.worker.spot]));
    for (const w of fallback.workloads) expect(spot[w.name], w.name).toBe(w.nodePool === FALLBACK_POOL);
    expect(prod.workloads.every((w) => !w.shape.worker.spot)).toBe(true);
  });
});
