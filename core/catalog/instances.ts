/**
 * Hardware catalog: every EC2 g5 size (NVIDIA A10G) and the m6i/m7i sizes used for Ray heads and system pods.
 *
 * Exhaustive typed tables keyed by a union: adding a size fails to compile until it is fully described.
 * Values are copied from `shared/facts/aws-g5.json`, which cites its sources:
 * - vCPU, memory, GPUs, NVMe, baseline network (the GPU's own facts are in ./accelerators.ts):
 *   aws/karpenter-provider-aws main@1d927085 `website/content/en/preview/reference/instance-types.md`.
 * - EFA support: eksctl-io/eksctl main@8b75484b `pkg/utils/instance/instance_types.go` (`EFASupported`).
 * - ENIs and IPv4 per ENI: awslabs/amazon-eks-ami v20260724 `nodeadm/internal/kubelet/instance-info.jsonl`.
 * - Price: us-east-1 on-demand Linux, APPROXIMATE, karpenter-provider-aws `zz_generated.pricing_aws.go`
 *   (AWS Pricing API snapshot of 2026-07-20). Check current pricing before quoting it.
 */
import { ACCELERATORS, type AcceleratorName, type AcceleratorSpec } from "./accelerators";

/** Every g5 size. The g5 family is the only GPU family this library plans for (A10G, 24 GB GDDR6). */
export const GPU_INSTANCE_TYPES = [
  "g5.xlarge",
  "g5.2xlarge",
  "g5.4xlarge",
  "g5.8xlarge",
  "g5.12xlarge",
  "g5.16xlarge",
  "g5.24xlarge",
  "g5.48xlarge",
] as const;
/** A g5 (A10G) size of the GPU catalog. */
export type GpuInstanceType = (typeof GPU_INSTANCE_TYPES)[number];

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

/** Fields every instance type has. */
export interface InstanceSpec {
  /** Logical CPUs (2 per physical core on these families). */
  readonly vcpu: number;
  /** Nominal memory in GiB (the instance size, not the kernel's MemTotal). */
  readonly memoryGiB: number;
  /** Sustained network bandwidth in Mbps ("up to" sizes burst above it for short periods only). */
  readonly networkBaselineMbps: number;
  /** ENIs of the default network card; with {@link ipv4PerEni} this sets the ENI-based max pods. */
  readonly maxEnis: number;
  /** IPv4 addresses per ENI. */
  readonly ipv4PerEni: number;
  /** Approximate us-east-1 on-demand Linux price in USD per hour. */
  readonly usdPerHourUsEast1: number;
}

/** A g5 size. */
export interface GpuInstanceSpec extends InstanceSpec {
  /** NVIDIA A10G GPUs. Multi-GPU sizes link them over PCIe only (no NVLink). */
  readonly gpus: number;
  /** The GPU (./accelerators.ts): its memory, throughput, power and node label. */
  readonly accelerator: AcceleratorName;
  /** Local instance-store NVMe: disk count and total decimal GB. Lost on stop; good for Ray spilling. */
  readonly nvme: { readonly disks: number; readonly totalGB: number };
  /** AWS's headline network figure, for display. */
  readonly networkHeadline: string;
  /** One EFA interface is available (g5.8xlarge and larger). Needs the EFA device plugin and aws-ofi-nccl. */
  readonly efaSupported: boolean;
}

/** The g5 table. */
export const GPU_INSTANCES: { readonly [K in GpuInstanceType]: GpuInstanceSpec } = {
  "g5.xlarge": {
    vcpu: 4,
    memoryGiB: 16,
    gpus: 1,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 250 },
    networkBaselineMbps: 2500,
    networkHeadline: "up to 10 Gbps",
    efaSupported: false,
    maxEnis: 4,
    ipv4PerEni: 15,
    usdPerHourUsEast1: 1.006,
  },
  "g5.2xlarge": {
    vcpu: 8,
    memoryGiB: 32,
    gpus: 1,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 450 },
    networkBaselineMbps: 5000,
    networkHeadline: "up to 10 Gbps",
    efaSupported: false,
    maxEnis: 4,
    ipv4PerEni: 15,
    usdPerHourUsEast1: 1.212,
  },
  "g5.4xlarge": {
    vcpu: 16,
    memoryGiB: 64,
    gpus: 1,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 600 },
    networkBaselineMbps: 10000,
    networkHeadline: "up to 25 Gbps",
    efaSupported: false,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 1.624,
  },
  "g5.8xlarge": {
    vcpu: 32,
    memoryGiB: 128,
    gpus: 1,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 900 },
    networkBaselineMbps: 25000,
    networkHeadline: "25 Gbps",
    efaSupported: true,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 2.448,
  },
  "g5.12xlarge": {
    vcpu: 48,
    memoryGiB: 192,
    gpus: 4,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 3800 },
    networkBaselineMbps: 40000,
    networkHeadline: "40 Gbps",
    efaSupported: true,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 5.672,
  },
  "g5.16xlarge": {
    vcpu: 64,
    memoryGiB: 256,
    gpus: 1,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 1900 },
    networkBaselineMbps: 25000,
    networkHeadline: "25 Gbps",
    efaSupported: true,
    maxEnis: 8,
    ipv4PerEni: 30,
    usdPerHourUsEast1: 4.096,
  },
  "g5.24xlarge": {
    vcpu: 96,
    memoryGiB: 384,
    gpus: 4,
    accelerator: "A10G",
    nvme: { disks: 1, totalGB: 3800 },
    networkBaselineMbps: 50000,
    networkHeadline: "50 Gbps",
    efaSupported: true,
    maxEnis: 15,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 8.144,
  },
  "g5.48xlarge": {
    vcpu: 192,
    memoryGiB: 768,
    gpus: 8,
    accelerator: "A10G",
    nvme: { disks: 2, totalGB: 7600 },
    networkBaselineMbps: 100000,
    networkHeadline: "100 Gbps",
    efaSupported: true,
    maxEnis: 7,
    ipv4PerEni: 50,
    usdPerHourUsEast1: 16.288,
  },
};

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

/** True when `name` is a g5 size in the catalog. */
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

/** Max pods by the ENI formula `ENIs × (IPv4 per ENI − 1) + 2` (nodeadm `calculateStandardMaxPods`). */
export function maxPodsByEni(spec: Pick<InstanceSpec, "maxEnis" | "ipv4PerEni">): number {
  return spec.maxEnis * (spec.ipv4PerEni - 1) + 2;
}
