import { existsSync, readdirSync, readFileSync } from "node:fs";
import { ACCELERATORS } from "../../../core/catalog/accelerators";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  CPU_INSTANCES,
  CPU_INSTANCE_TYPES,
  GPU_INSTANCES,
  GPU_INSTANCE_TYPES,
  isCpuInstanceType,
  isGpuInstanceType,
  maxPodsByEni,
  usableGpuMemoryGiB,
} from "../../../core/catalog/instances";
import { repoRoot } from "../../helpers/fixtures";

const factsFile = resolve(repoRoot, "../shared/facts/aws-g5.json");
const facts = existsSync(factsFile)
  ? (JSON.parse(readFileSync(factsFile, "utf8")) as {
      g5: Record<string, number | string | boolean>[];
      headNodeCandidates: Record<string, number | string>[];
    })
  : undefined;
/** The g6 and g6e facts, kept in this repository (facts/aws-g6.json) in the shared facts' form. */
const g6Facts = JSON.parse(readFileSync(join(repoRoot, "facts/aws-g6.json"), "utf8")) as {
  instances: Record<string, number | string>[];
};

/** A catalog row's figures beside the facts row's, field by field. */
function rowPair(c: (typeof GPU_INSTANCES)[keyof typeof GPU_INSTANCES], f: Record<string, unknown>, efa: unknown) {
  const ours = [
    c.vcpu,
    c.memoryGiB,
    c.gpus,
    ACCELERATORS[c.accelerator].memoryMiB,
    c.nvmeGB,
    c.efaInterfaces,
    c.maxEnis,
    c.ipv4PerEni,
    c.usdPerHourUsEast1,
  ];
  const theirs = [
    f["vcpu"],
    f["memoryGiB"],
    f["gpuCount"],
    f["gpuMemoryMiBPerGpuEc2Api"],
    f["localNvmeGB"],
    efa,
    f["maxEnis"],
    f["ipv4PerEni"],
    f["usEast1OnDemandLinuxUsdPerHourApprox"],
  ];
  return { ours, theirs };
}

describe("hardware catalog", () => {
  it("lists every g5, g6 and g6e size and the m6i/m7i head sizes", () => {
    expect(GPU_INSTANCE_TYPES).toHaveLength(24);
    expect(GPU_INSTANCE_TYPES.every((t) => /^g(5|6|6e)\.\d*x?large$/.test(t))).toBe(true);
    expect(Object.keys(GPU_INSTANCES).sort()).toEqual([...GPU_INSTANCE_TYPES].sort());
    expect(Object.keys(CPU_INSTANCES).sort()).toEqual([...CPU_INSTANCE_TYPES].sort());
    expect(CPU_INSTANCE_TYPES.every((t) => /^m[67]i\./.test(t))).toBe(true);
  });

  it("uses CUDA's usable A10G memory, not the 24 GiB label", () => {
    expect(usableGpuMemoryGiB("g5.xlarge")).toBe(ACCELERATORS.A10G.cudaTotalGiB);
    expect(ACCELERATORS.A10G.cudaTotalGiB).toBeLessThan(ACCELERATORS.A10G.memoryMiB / 1024);
    expect(GPU_INSTANCES["g5.48xlarge"].gpus).toBe(8);
  });

  it("computes max pods with the ENI formula (g5.12xlarge 737, g5.48xlarge 345)", () => {
    expect(maxPodsByEni(GPU_INSTANCES["g5.12xlarge"])).toBe(737);
    expect(maxPodsByEni(GPU_INSTANCES["g5.48xlarge"])).toBe(345);
  });

  it.skipIf(!facts)("matches shared/facts/aws-g5.json field by field (skipped when ../shared/facts is absent)", () => {
    for (const f of facts!.g5) {
      const t = String(f["instanceType"]);
      expect(isGpuInstanceType(t), t).toBe(true);
      const c = GPU_INSTANCES[t as keyof typeof GPU_INSTANCES];
      const { ours, theirs } = rowPair(c, f, f["maxEfaInterfaces"]);
      expect(ours, t).toEqual(theirs);
      expect(maxPodsByEni(c), t).toBe(f["maxPodsEniFormula"]);
    }
    for (const f of facts!.headNodeCandidates) {
      const t = String(f["instanceType"]);
      expect(isCpuInstanceType(t), t).toBe(true);
      const c = CPU_INSTANCES[t as keyof typeof CPU_INSTANCES];
      expect([c.vcpu, c.memoryGiB, c.maxEnis, c.ipv4PerEni, c.usdPerHourUsEast1], t).toEqual([
        f["vcpu"],
        f["memoryGiB"],
        f["maxEnis"],
        f["ipv4PerEni"],
        f["usEast1OnDemandLinuxUsdPerHourApprox"],
      ]);
      expect(maxPodsByEni(c), t).toBe(f["maxPodsEniFormula"]);
    }
  });

  it("matches facts/aws-g6.json field by field, every g6 and g6e size", () => {
    expect(g6Facts.instances.map((f) => f["instanceType"])).toEqual(
      GPU_INSTANCE_TYPES.filter((t) => t.startsWith("g6")),
    );
    for (const f of g6Facts.instances) {
      const t = String(f["instanceType"]) as keyof typeof GPU_INSTANCES;
      const { ours, theirs } = rowPair(GPU_INSTANCES[t], f, f["efaInterfaces"]);
      expect(ours, t).toEqual(theirs);
      expect(maxPodsByEni(GPU_INSTANCES[t]), t).toBe(f["maxPodsEniFormula"]);
    }
  });

  it("knows every instance type named in Pulumi.*.yaml", () => {
    const stacks = readdirSync(repoRoot).filter((f) => /^Pulumi\..+\.yaml$/.test(f));
    expect(stacks.length).toBeGreaterThanOrEqual(2);
    const named: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "instanceType" && typeof x === "string") named.push(x);
          else walk(x);
        }
      }
    };
    for (const f of stacks) walk(parse(readFileSync(join(repoRoot, f), "utf8")));
    expect(named.length).toBeGreaterThan(0);
    for (const t of named) expect(isGpuInstanceType(t) || isCpuInstanceType(t), t).toBe(true);
  });
});
