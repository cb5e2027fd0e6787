/** What the catalog holds per instance type: the fields every size has, and those of a GPU size. */
import type { AcceleratorName } from "./accelerators";

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

/** A GPU size (g5, g6, g6e). */
export interface GpuInstanceSpec extends InstanceSpec {
  /** GPUs per instance. Multi-GPU sizes of these families link them over PCIe only (no NVLink). */
  readonly gpus: number;
  /** The GPU (./accelerators.ts): its memory, throughput, power, node label and AMI type. */
  readonly accelerator: AcceleratorName;
  /** Local instance-store NVMe, total decimal GB. Lost on stop; good for Ray spilling. */
  readonly nvmeGB: number;
  /**
   * EFA interfaces (`vpc.amazonaws.com/efa`), 0 where the size has none. Using them needs the EFA device plugin and
   * aws-ofi-nccl.
   */
  readonly efaInterfaces: number;
}
