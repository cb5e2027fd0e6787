/**
 * Every GPU a pool may carry, one row each with its sources (shared/facts/aws-g5.json and facts/aws-g6.json,
 * `gpuSpecs`): memory as EC2 reports it and as CUDA hands it to PyTorch, dense tensor throughput, memory bandwidth,
 * interconnect, power, the label its nodes carry and the EKS AMI that drives it. Instances name their accelerator
 * (./gpu-instances.ts); every planner reads GPU facts from here, through the instance or the pool's node
 * (test/core/catalog/accelerators.test.ts finds no GPU constant anywhere else).
 */

/** The GPUs of the catalog. */
export const ACCELERATOR_NAMES = ["A10G", "L4", "L40S"] as const;
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
  /** Board power limit, W, as nvidia-smi reports it (A10G) or the datasheet gives it. */
  readonly powerLimitWatts: number;
  /** Dense FP8 tensor throughput, TFLOPS, or undefined where the GPU has no FP8 (Ampere). */
  readonly denseFp8Tflops: number | undefined;
  /**
   * The EKS AMI type of its node groups: the EKS-optimized AL2023 NVIDIA AMI, whose driver loads the open kernel module
   * for this GPU (its PCI id is on the AMI's `nvidia-open-supported-devices-580.txt`). That AMI ships no device plugin:
   * the platform's NVIDIA device plugin release serves every family alike.
   */
  readonly eksAmiType: "AL2023_x86_64_NVIDIA";
  /** The GPU's PCI device id, as the AMI's open kernel module list names it. */
  readonly pciDeviceId: string;
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
    denseFp8Tflops: undefined,
    eksAmiType: "AL2023_x86_64_NVIDIA",
    pciDeviceId: "0x2237",
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
  L4: {
    nodeLabel: "nvidia-l4",
    memoryMiB: 22888,
    cudaTotalGiB: 22.03,
    denseBf16Tflops: 121,
    tflopsVerified: true,
    memoryBandwidthGBps: 300,
    interconnect: "pcie-gen4",
    powerLimitWatts: 72,
    denseFp8Tflops: 242,
    eksAmiType: "AL2023_x86_64_NVIDIA",
    pciDeviceId: "0x27B8",
    sources: [
      "memoryMiB: EC2 DescribeInstanceTypes, via karpenter-provider-aws instance-types.md (22888 MiB, as the A10G)",
      "cudaTotalGiB: 'GPU 0 has a total capacity of 22.03 GiB' on an L4 (ArcInstitute/evo2#190)",
      "TFLOPS, bandwidth, power: the NVIDIA L4 datasheet, mirrored in winston-zhang-orz/gpu-specs data/specs.json " +
        "(121 dense BF16, 242 with sparsity)",
      "pciDeviceId: amazon-eks-ami v20260724 templates/al2023/runtime/gpu/nvidia-open-supported-devices-580.txt",
    ],
  },
  L40S: {
    nodeLabel: "nvidia-l40s",
    memoryMiB: 45776,
    cudaTotalGiB: 44.39,
    denseBf16Tflops: 362,
    tflopsVerified: true,
    memoryBandwidthGBps: 864,
    interconnect: "pcie-gen4",
    powerLimitWatts: 300,
    denseFp8Tflops: 733,
    eksAmiType: "AL2023_x86_64_NVIDIA",
    pciDeviceId: "0x26B9",
    sources: [
      "memoryMiB: EC2 DescribeInstanceTypes, via karpenter-provider-aws instance-types.md (45776 MiB)",
      "cudaTotalGiB: 'GPU 0 has a total capacity of 44.39 GiB' per L40S on a g6e.24xlarge (a vLLM deployment " +
        "note of rh-ai-quickstart); 44.42 GiB on 8x L40S (stepfun-ai/Step-Video-T2V#8): the lowest is kept",
      "TFLOPS, bandwidth, power: the NVIDIA L40S datasheet, mirrored in winston-zhang-orz/gpu-specs data/specs.json",
      "pciDeviceId: amazon-eks-ami v20260724 templates/al2023/runtime/gpu/nvidia-open-supported-devices-580.txt",
    ],
  },
};
