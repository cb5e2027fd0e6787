import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { kubeReservedCpuMillis, kubeReservedMemoryMiB, nodeAllocatable } from "../../../core/catalog/eks-allocatable";
import { defaultDaemonSetReserve } from "../../../core/catalog/daemonsets";
import { GPU_INSTANCE_TYPES } from "../../../core/catalog/instances";
import { repoRoot } from "../../helpers/fixtures";

const factsFile = resolve(repoRoot, "../shared/facts/eks-allocatable.json");
const facts = existsSync(factsFile)
  ? (JSON.parse(readFileSync(factsFile, "utf8")) as { g5: Record<string, number | string>[] })
  : undefined;

describe("EKS allocatable model (AL2023 nodeadm)", () => {
  it("reproduces the g5.12xlarge worked example: 190m CPU and 8362 MiB reserved", () => {
    expect(kubeReservedCpuMillis(48)).toBe(190);
    expect(kubeReservedMemoryMiB(737)).toBe(8362);
    const a = nodeAllocatable("g5.12xlarge");
    expect(a).toMatchObject({ cpuMillis: 47810, maxPods: 737, memoryMiB: 173400, gpus: 4 });
  });

  it("reproduces the g5.48xlarge worked example: 550m CPU, 345 pods, 4050 MiB reserved", () => {
    expect(nodeAllocatable("g5.48xlarge")).toMatchObject({
      kubeReservedCpuMillis: 550,
      maxPods: 345,
      kubeReservedMemoryMiB: 4050,
      gpus: 8,
    });
  });

  it.skipIf(!facts)(
    "matches shared/facts/eks-allocatable.json for every g5 size (skipped when ../shared/facts is absent)",
    () => {
      for (const f of facts!.g5) {
        const a = nodeAllocatable(f["instanceType"] as (typeof GPU_INSTANCE_TYPES)[number]);
        expect(a.kubeReservedCpuMillis, String(f["instanceType"])).toBe(f["kubeReservedCpuMilli"]);
        expect(a.cpuMillis).toBe(f["allocatableCpuMilli"]);
        expect(a.kubeReservedMemoryMiB).toBe(f["kubeReservedMemMiAtEniMaxPods"]);
        // Our memory model is Karpenter's conservative estimate (7.5% VM overhead), never the nominal upper bound.
        expect(`${a.memoryMiB}Mi`).toBe(f["karpenterAllocatableMemEstimate"]);
        expect(a.memoryMiB).toBeLessThan(Number(f["allocatableMemMiNominalMinusReserveAtEni"]));
      }
    },
  );

  it("reserves more for GPU nodes' DaemonSets than for CPU nodes'", () => {
    const gpu = defaultDaemonSetReserve("gpu");
    const cpu = defaultDaemonSetReserve("cpu");
    expect(gpu.cpuMillis).toBeGreaterThan(cpu.cpuMillis);
    // the DCGM exporter's requests (our values: 100m, 128Mi) on GPU nodes only
    expect(gpu).toEqual({ cpuMillis: cpu.cpuMillis + 100, memoryMiB: cpu.memoryMiB + 128 });
    expect(cpu).toEqual({ cpuMillis: 280, memoryMiB: 1144 });
  });
});
