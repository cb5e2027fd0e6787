/**
 * EKS node allocatable on the AL2023 EKS-optimized AMIs (nodeadm), as the kubelet computes it:
 * `allocatable = capacity − kubeReserved − systemReserved − evictionHard`.
 *
 * Sources (awslabs/amazon-eks-ami tag v20260724, via `shared/facts/eks-allocatable.md`):
 * - kubeReserved CPU bands and memory `11 × maxPods + 255` MiB, evictionHard `memory.available: 100Mi`, no
 *   systemReserved: `nodeadm/internal/kubelet/config.go` (`getCPUMillicoresToReserve`, `getMemoryMebibytesToReserve`).
 * - max pods by ENI: `nodeadm/internal/kubelet/eni_max_pods.go`.
 * - Capacity memory is the kernel's MemTotal, a few percent under the nominal size. Karpenter models that gap as
 *   a 7.5 % VM overhead (`--vm-memory-overhead-percent`, aws/karpenter-provider-aws `pkg/operator/options/options.go`);
 *   we use the same figure so a pod we size never exceeds what a real node offers.
 * - Whether EKS managed node groups reserve memory for the MNG-capped max pods (250) or the ENI value (737 on
 *   g5.12xlarge) is not verified; we reserve for the ENI value, the larger (safer) reservation.
 */
import {
  CPU_INSTANCES,
  GPU_INSTANCES,
  isGpuInstanceType,
  maxPodsByEni,
  type CpuInstanceType,
  type GpuInstanceType,
} from "./instances";

/** Assumptions of the allocatable model; the defaults reproduce Karpenter's conservative estimate. */
export interface AllocatableAssumptions {
  /**
   * Fraction of nominal memory the kernel and hypervisor keep (nominal − MemTotal).
   * @default 0.075 (Karpenter's `--vm-memory-overhead-percent`)
   */
  readonly vmMemoryOverheadFraction: number;
  /**
   * Hard eviction threshold for memory, in MiB.
   * @default 100 (AL2023 nodeadm `evictionHard: memory.available: 100Mi`)
   */
  readonly evictionHardMemoryMiB: number;
}

/** Defaults of {@link AllocatableAssumptions}. */
export const DEFAULT_ALLOCATABLE_ASSUMPTIONS: AllocatableAssumptions = {
  vmMemoryOverheadFraction: 0.075,
  evictionHardMemoryMiB: 100,
};

/** What the kubelet advertises for a node, before DaemonSets take their share. */
export interface NodeAllocatable {
  readonly instanceType: GpuInstanceType | CpuInstanceType;
  readonly maxPods: number;
  readonly kubeReservedCpuMillis: number;
  readonly kubeReservedMemoryMiB: number;
  readonly capacityMemoryMiB: number;
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  readonly gpus: number;
}

/** CPU bands of nodeadm `getCPUMillicoresToReserve`: [start, end) in millicores and the reserve per 10 000. */
const CPU_RESERVE_BANDS: readonly (readonly [start: number, end: number, per10k: number])[] = [
  [0, 1000, 600],
  [1000, 2000, 100],
  [2000, 4000, 50],
  [4000, Number.POSITIVE_INFINITY, 25],
];

/** kubeReserved CPU in millicores: 6 % of core 1, 1 % of core 2, 0.5 % of cores 3–4, 0.25 % of the rest. */
export function kubeReservedCpuMillis(vcpu: number): number {
  const total = vcpu * 1000;
  let reserved = 0;
  for (const [start, end, per10k] of CPU_RESERVE_BANDS) {
    if (total <= start) break;
    reserved += Math.floor(((Math.min(total, end) - start) * per10k) / 10000);
  }
  return reserved;
}

/** kubeReserved memory in MiB for a node that may run `maxPods` pods: `11 × maxPods + 255`. */
export function kubeReservedMemoryMiB(maxPods: number): number {
  return 11 * maxPods + 255;
}

/** Allocatable CPU, memory and GPUs of one node of `instanceType`. */
export function nodeAllocatable(
  instanceType: GpuInstanceType | CpuInstanceType,
  assumptions: AllocatableAssumptions = DEFAULT_ALLOCATABLE_ASSUMPTIONS,
): NodeAllocatable {
  const spec = isGpuInstanceType(instanceType) ? GPU_INSTANCES[instanceType] : CPU_INSTANCES[instanceType];
  const gpus = isGpuInstanceType(instanceType) ? GPU_INSTANCES[instanceType].gpus : 0;
  const maxPods = maxPodsByEni(spec);
  const reservedCpu = kubeReservedCpuMillis(spec.vcpu);
  const reservedMemory = kubeReservedMemoryMiB(maxPods);
  const capacityMemoryMiB = Math.floor(spec.memoryGiB * 1024 * (1 - assumptions.vmMemoryOverheadFraction));
  return {
    instanceType,
    maxPods,
    kubeReservedCpuMillis: reservedCpu,
    kubeReservedMemoryMiB: reservedMemory,
    capacityMemoryMiB,
    cpuMillis: spec.vcpu * 1000 - reservedCpu,
    memoryMiB: capacityMemoryMiB - reservedMemory - assumptions.evictionHardMemoryMiB,
    gpus,
  };
}

/**
 * Whether a node of `alloc` leaves a Ray pod at least 1 CPU and 1 GiB once DaemonSets take `reserve`: the rule of
 * `daemonSetReserve` on a pool's own size and on each fallback size (core/config/stack.ts, fallback-types.ts).
 */
export function leavesRayPodRoom(
  alloc: Pick<NodeAllocatable, "cpuMillis" | "memoryMiB">,
  reserve: { readonly cpuMillis: number; readonly memoryMiB: number },
): boolean {
  return alloc.cpuMillis - reserve.cpuMillis >= 1000 && alloc.memoryMiB - reserve.memoryMiB >= 1024;
}
