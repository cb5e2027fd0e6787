/**
 * The accelerator table: its figures are the shared facts', every GPU instance names a row, and no GPU fact is written
 * anywhere else in the code (planners read it through the instance's accelerator).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ACCELERATORS, ACCELERATOR_NAMES } from "../../../core/catalog/accelerators";
import { acceleratorOf, GPU_INSTANCE_TYPES, usableGpuMemoryGiB } from "../../../core/catalog/instances";
import { ACCELERATOR_LABEL_KEY, planPools } from "../../../core/pools";
import { filesUnder, repoRoot, repoStack } from "../../helpers/fixtures";

const factsFile = resolve(process.env["RAY_GPU_FACTS"] ?? join(repoRoot, "../shared/facts"), "aws-g5.json");
const facts = existsSync(factsFile)
  ? (JSON.parse(readFileSync(factsFile, "utf8")) as {
      g5: Record<string, unknown>[];
      gpuSpecs: Record<string, Record<string, unknown>>;
    })
  : undefined;

/** The L4 and L40S rows of facts/aws-g6.json, kept in this repository. */
const g6 = JSON.parse(readFileSync(join(repoRoot, "facts/aws-g6.json"), "utf8")) as {
  instances: { instanceType: string; gpuMemoryMiBPerGpuEc2Api: number }[];
  gpuSpecs: Record<string, Record<string, unknown> & { bf16TensorTflops: { dense: number } }>;
};

/** Code lines (comments aside) of every source file the planners, components and runtime are made of. */
function codeLines(): { at: string; text: string }[] {
  const roots = ["core", "workloads", "cli", "components", "policy", "stacks", "io", "runtime/ray_gpu"];
  return roots
    .flatMap((r) => filesUnder(join(repoRoot, r), /\.(ts|py)$/))
    .filter((f) => !f.endsWith(join("catalog", "accelerators.ts")))
    .flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .map((text, i) => ({ at: `${relative(repoRoot, f)}:${i + 1}`, text }))
        .filter(({ text }) => !/^\s*(\*|\/\/|\/\*|#)/.test(text)),
    );
}

describe("the accelerator table", () => {
  it("holds the figures of facts/aws-g6.json for the L4 and the L40S", () => {
    for (const name of ["L4", "L40S"] as const) {
      const spec = g6.gpuSpecs[name]!;
      const a = ACCELERATORS[name];
      const fp8 = spec["fp8TensorTflops"] as { dense: number };
      expect(
        [
          a.memoryBandwidthGBps,
          a.powerLimitWatts,
          a.denseBf16Tflops,
          a.denseFp8Tflops,
          a.cudaTotalGiB,
          a.tflopsVerified,
        ],
        name,
      ).toEqual([
        spec["memoryBandwidthGBs"],
        spec["maxPowerW"],
        spec.bf16TensorTflops.dense,
        fp8.dense,
        spec["cudaTotalGiB"],
        true,
      ]);
      const family = name === "L4" ? "g6." : "g6e.";
      for (const row of g6.instances.filter((r) => r.instanceType.startsWith(family)))
        expect(row.gpuMemoryMiBPerGpuEc2Api, row.instanceType).toBe(a.memoryMiB);
      // CUDA hands out less than EC2 reports: the planner plans against the lower figure.
      expect(a.cudaTotalGiB).toBeLessThan(a.memoryMiB / 1024);
    }
  });

  it.skipIf(!facts)("holds the shared facts' figures for the A10G", () => {
    for (const name of ["A10G"] as const) {
      const spec = facts!.gpuSpecs[name]!;
      const a = ACCELERATORS[name];
      expect([a.memoryBandwidthGBps, a.powerLimitWatts], name).toEqual([
        spec["memoryBandwidthGBs"],
        spec["tdpW_reported"],
      ]);
      for (const g5 of facts!.g5) expect(g5["gpuMemoryMiBPerGpuEc2Api"]).toBe(a.memoryMiB);
      // No vendor figure exists for the A10G's tensor throughput: the table must say it is assumed.
      expect(a.tflopsVerified, name).toBe(spec["bf16TensorTflops"] !== null);
    }
  });

  it("is what every GPU instance, pool and memory plan reads", () => {
    for (const type of GPU_INSTANCE_TYPES) {
      expect(Object.values(ACCELERATORS)).toContain(acceleratorOf(type));
      expect(usableGpuMemoryGiB(type)).toBe(acceleratorOf(type).cudaTotalGiB);
    }
    const pools = planPools(repoStack("prod").platform);
    for (const p of pools.gpu) expect(p.labels[ACCELERATOR_LABEL_KEY]).toBe(acceleratorOf(p.instanceType).nodeLabel);
  });

  it("is the only place a GPU's figures are written", () => {
    const figures = ACCELERATOR_NAMES.flatMap((n) => {
      const a = ACCELERATORS[n];
      return [String(a.memoryMiB), String(a.cudaTotalGiB), a.nodeLabel];
    });
    const named = /\b(A10G|GPU)_\w*(GIB|MIB|TFLOPS|WATTS|GBPS)\s*=\s*[\d.]+/;
    const figure = (text: string) =>
      figures.some((f) => new RegExp(`(^|[^\\w.])${f.replace(".", "\\.")}(?![\\w.])`).test(text));
    const found = codeLines().filter(({ text }) => figure(text) || named.test(text));
    expect(found.map((l) => `${l.at}: ${l.text.trim()}`)).toEqual([]);
  });
});
