/**
 * Hardware catalog: the GPU sizes (./gpu-instances.ts) and the m6i/m7i sizes used for Ray heads and system pods, with
 * the lookups every planner uses.
 *
 * Exhaustive typed tables keyed by a union: adding a size fails to compile until it is fully described.
 * CPU values are copied from `shared/facts/aws-g5.json` (`headNodeCandidates`), whose sources are those of the GPU
 * table: Karpenter's instance-types.md, nodeadm's instance-info.jsonl and Karpenter's pricing snapshot (APPROXIMATE).
 */
import { ACCELERATORS, type AcceleratorSpec } from "./accelerators";
import { GPU_INSTANCE_TYPES, GPU_INSTANCES, type GpuInstanceType } from "./gpu-instances";
import type { InstanceSpec } from "./instance-spec";

export { GPU_INSTANCE_TYPES, GPU_INSTANCES, type GpuInstanceType } from "./gpu-instances";
export type { GpuInstanceSpec, InstanceSpec } from "./instance-spec";

/** CPU-only sizes for the Ray head, the KubeRay operator and system pods. */
export const CPU_INSTANCE_TYPES = [
  "m6i.large",
  "m6i.xlarge",
  "m6i.2xlarge",
  "m6i.4xlarge",
  "m6i.8xlarge",
  "m6i.12xlarge",
  "m6i.16xlarge",
  "m6i.24xlarge",
  "m6i.32xlarge",
  "m7i.large",
  "m7i.xlarge",
  "m7i.2xlarge",
  "m7i.4xlarge",
  "m7i.8xlarge",
  "m7i.12xlarge",
  "m7i.16xlarge",
  "m7i.24xlarge",
  "m7i.48xlarge",
] as const;
/** An m6i or m7i size of the CPU catalog. */
export type CpuInstanceType = (typeof CPU_INSTANCE_TYPES)[number];

/** The m6i/m7i table (4 GiB per vCPU, no instance store). */
export const CPU_INSTANCES: { readonly [K in CpuInstanceType]: InstanceSpec } = {
  "m6i.large": {
    vcpu: 2,
    memoryGiB: 8,
    networkBaselineMbps: 781,
    maxEnis: 3,
    ipv4PerEni: 10,
    usdPerHourUsEast1: 0.096,
  },
  "m6i.xlarge": {
    vcpu: 4,
    memoryGiB: 16,
    networkBaselineMbps: 1562,
    maxEnis: 4,
    ipv4PerEni: 15,
    usdPerHourUsEast1: 0.192,
  },
  "m6i.2xlarge": {
    vcpu: 8,
    memoryGiB: 32,
    networkBaselineMbps: 3125,
    maxEnis: 4,
    ipv4PerEni: 15,
    usdPerHourUsEast1: 0.384,
  },
  "m6i.4xlarge": {
    vcpu: 16,
    memoryGiB: 64,
    networkBaselineMbps: 6250,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 0.768,
  },
  "m6i.8xlarge": {
    vcpu: 32,
    memoryGiB: 128,
    networkBaselineMbps: 12500,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 1.536,
  },
  "m6i.12xlarge": {
    vcpu: 48,
    memoryGiB: 192,
    networkBaselineMbps: 18750,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 2.304,
  },
  "m6i.16xlarge": {
    vcpu: 64,
    memoryGiB: 256,
    networkBaselineMbps: 25000,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 3.072,
  },
  "m6i.24xlarge": {
    vcpu: 96,
    memoryGiB: 384,
    networkBaselineMbps: 37500,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 4.608,
  },
  "m6i.32xlarge": {
    vcpu: 128,
    memoryGiB: 512,
    networkBaselineMbps: 50000,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 6.144,
  },
  "m7i.large": {
    vcpu: 2,
    memoryGiB: 8,
    networkBaselineMbps: 781,
    maxEnis: 3,
    ipv4PerEni: 10,
    usdPerHourUsEast1: 0.1008,
  },
  "m7i.xlarge": {
    vcpu: 4,
    memoryGiB: 16,
    networkBaselineMbps: 1562,
    maxEnis: 4,
    ipv4PerEni: 15,
    usdPerHourUsEast1: 0.2016,
  },
  "m7i.2xlarge": {
    vcpu: 8,
    memoryGiB: 32,
    networkBaselineMbps: 3125,
    maxEnis: 4,
    ipv4PerEni: 15,
    usdPerHourUsEast1: 0.4032,
  },
  "m7i.4xlarge": {
    vcpu: 16,
    memoryGiB: 64,
    networkBaselineMbps: 6250,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 0.8064,
  },
  "m7i.8xlarge": {
    vcpu: 32,
    memoryGiB: 128,
    networkBaselineMbps: 12500,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 1.6128,
  },
  "m7i.12xlarge": {
    vcpu: 48,
    memoryGiB: 192,
    networkBaselineMbps: 18750,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 2.4192,
  },
  "m7i.16xlarge": {
    vcpu: 64,
    memoryGiB: 256,
    networkBaselineMbps: 25000,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 3.2256,
  },
  "m7i.24xlarge": {
    vcpu: 96,
    memoryGiB: 384,
    networkBaselineMbps: 37500,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 4.8384,
  },
  "m7i.48xlarge": {
    vcpu: 192,
    memoryGiB: 768,
    networkBaselineMbps: 50000,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 9.6768,
  },
};

/** True when `name` is a GPU size (g5, g6, g6e) in the catalog. */
export function isGpuInstanceType(name: string): name is GpuInstanceType {
  return Object.hasOwn(GPU_INSTANCES, name);
}

/** True when `name` is an m6i/m7i size in the catalog. */
export function isCpuInstanceType(name: string): name is CpuInstanceType {
  return Object.hasOwn(CPU_INSTANCES, name);
}

/** Looks up any catalog instance type (GPU or CPU). */
export function instanceSpec(name: GpuInstanceType | CpuInstanceType): InstanceSpec {
  return isGpuInstanceType(name) ? GPU_INSTANCES[name] : CPU_INSTANCES[name];
}

/** The GPU of a `type` node (its row of ./accelerators.ts). */
export function acceleratorOf(type: GpuInstanceType): AcceleratorSpec {
  return ACCELERATORS[GPU_INSTANCES[type].accelerator];
}

/**
 * Usable memory of one GPU of `type`, in GiB: what CUDA can hand out (the accelerator's `cudaTotalGiB`), before the
 * CUDA context and allocator headroom that the memory planner subtracts.
 */
export function usableGpuMemoryGiB(type: GpuInstanceType): number {
  return GPU_INSTANCES[type].gpus > 0 ? acceleratorOf(type).cudaTotalGiB : 0;
}

/** Host memory per GPU of a `type` node, GiB (nominal). */
export const hostMemoryGiBPerGpu = (type: GpuInstanceType): number =>
  GPU_INSTANCES[type].memoryGiB / GPU_INSTANCES[type].gpus;

/** Max pods by the ENI formula `ENIs × (IPv4 per ENI − 1) + 2` (nodeadm `calculateStandardMaxPods`). */
export function maxPodsByEni(spec: Pick<InstanceSpec, "maxEnis" | "ipv4PerEni">): number {
  return spec.maxEnis * (spec.ipv4PerEni - 1) + 2;
}

/** The instance families of the GPU catalog, from their sizes' names (`g5`, `g6`, `g6e`). */
export const gpuFamilyOf = (type: GpuInstanceType): string => type.slice(0, type.indexOf("."));

/** The GPU sizes of the catalog with at least one EFA interface, in catalog order. */
export const EFA_INSTANCE_TYPES: readonly GpuInstanceType[] = GPU_INSTANCE_TYPES.filter(
  (t) => GPU_INSTANCES[t].efaInterfaces > 0,
);
