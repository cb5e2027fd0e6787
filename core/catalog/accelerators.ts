/**
 * Every GPU a pool may carry, one row each with its sources (shared/facts/aws-g5.json `gpuSpecs`): memory as EC2
 * reports it and as CUDA hands it to PyTorch, dense tensor throughput, memory bandwidth, interconnect, power, and the
 * label EKS puts on its nodes. Instances name their accelerator (./instances.ts); every planner reads GPU facts from
 * here, through the instance (test/core/catalog/accelerators.test.ts finds no GPU constant anywhere else).
 */

/** The GPUs of the catalog. */
export const ACCELERATOR_NAMES = ["A10G"] as const;
/** A GPU of the catalog, by name. */
export type AcceleratorName = (typeof ACCELERATOR_NAMES)[number];

/** One GPU. */
export interface AcceleratorSpec {
  /** The value of `k8s.amazonaws.com/accelerator` on its nodes (`ACCELERATOR_LABEL_KEY`, ../pools.ts). */
  readonly nodeLabel: string;
  /** Device memory as EC2 DescribeInstanceTypes reports it, MiB (not the marketing label). */
  readonly memoryMiB: number;
  /**
   * Memory CUDA reports to PyTorch as the device's total capacity, GiB: what the memory planner may plan against,
   * before the CUDA context and allocator headroom it subtracts. The lowest figure reported.
   */
  readonly cudaTotalGiB: number;
  /** Dense BF16 tensor throughput, TFLOPS: the step-time estimate's denominator. */
  readonly denseBf16Tflops: number;
  /** Whether {@link denseBf16Tflops} is a vendor figure, or an unverified one the estimate only assumes. */
  readonly tflopsVerified: boolean;
  readonly memoryBandwidthGBps: number;
  /** How GPUs of one node reach each other. */
  readonly interconnect: "pcie-gen4" | "nvlink";
  /** Board power limit, W, as nvidia-smi reports it. */
  readonly powerLimitWatts: number;
  /** Where each figure comes from. */
  readonly sources: readonly string[];
}

/** The table. */
export const ACCELERATORS: { readonly [A in AcceleratorName]: AcceleratorSpec } = {
  A10G: {
    nodeLabel: "nvidia-a10g",
    memoryMiB: 22888,
    cudaTotalGiB: 21.99,
    denseBf16Tflops: 70,
    tflopsVerified: false,
    memoryBandwidthGBps: 600,
    interconnect: "pcie-gen4",
    powerLimitWatts: 300,
    sources: [
      "memoryMiB: EC2 DescribeInstanceTypes, via karpenter-provider-aws instance-types.md (22888 MiB)",
      "cudaTotalGiB: 'GPU 0 has a total capacity of 21.99 GiB', torch >= 2.1 on ml.g5.12xlarge and EKS " +
        "(vllm-project/vllm#2395); older drivers and torch report 22.19 GiB (vllm-project/vllm#372), nvidia-smi 23028 MiB",
      "denseBf16Tflops: UNVERIFIED, the figure third-party tables quote; NVIDIA publishes no A10G datasheet, and " +
        "Baseten ('NVIDIA A10 vs A10G for ML model inference') says its tensor cores are slower than the A10's 125",
      "memoryBandwidthGBps: Baseten, same article (600 GB/s, as the A10)",
      "interconnect: PCIe Gen4, no NVLink between GPUs of a g5 (gist shashankprasanna/10ebe6dc1ba1d8d93db17da4e2cc890e)",
      "powerLimitWatts: 300 W as nvidia-smi reports it on g5, same gist (third party)",
    ],
  },
};
