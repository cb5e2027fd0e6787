/**
 * The rules on a GPU pool's `fallbackInstanceTypes` that span fields: each size differs from the pool's own and from
 * the others; has as many GPUs per node (a job's workers hold all of a node's GPUs, and Kueue's quota counts them); has
 * an EFA interface where the pool uses EFA; leaves a Ray pod room after the DaemonSet reserve; gives node group names
 * EKS can hold and no other group has; and the queue is on (its quota is what keeps the pool's groups to `maxNodes`
 * busy nodes together, as for spot-with-fallback). Pure; `./stack.ts` runs them with the other rules.
 */
import { leavesRayPodRoom, nodeAllocatable } from "../catalog/eks-allocatable";
import { GPU_INSTANCE_TYPES, GPU_INSTANCES, type GpuInstanceType } from "../catalog/instances";
import { fallbackGroupName, MAX_POOL_NAME, spotGroupName, type GpuCapacityType } from "./platform";
import type { DaemonSetReserveConfig } from "./types";

type AddIssue = (path: (string | number)[], message: string) => void;

/** What the fallback rules read of a stack. */
interface FallbackShape {
  readonly platform: {
    readonly cpuNodeGroup: { readonly name: string };
    readonly gpuNodeGroups: readonly {
      readonly name: string;
      readonly instanceType: GpuInstanceType;
      readonly fallbackInstanceTypes: readonly GpuInstanceType[];
      readonly capacityType: GpuCapacityType;
      readonly efa: boolean;
      readonly daemonSetReserve?: DaemonSetReserveConfig | undefined;
    }[];
    readonly queueing: { readonly enabled: boolean };
  };
}
type Pool = FallbackShape["platform"]["gpuNodeGroups"][number];

/** Why `type` cannot back `pool` up, or undefined. */
function typeProblem(pool: Pool, type: GpuInstanceType, earlier: readonly GpuInstanceType[]): string | undefined {
  const own = GPU_INSTANCES[pool.instanceType];
  const spec = GPU_INSTANCES[type];
  if (type === pool.instanceType) return `is the pool's own instanceType: list only other sizes`;
  if (earlier.includes(type)) return `is listed twice: list each size once, in the order to try them`;
  if (spec.gpus !== own.gpus)
    return (
      `has ${spec.gpus} GPU(s) per node and ${pool.instanceType} has ${own.gpus}: a fallback size must have as many ` +
      `GPUs per node (a job's workers each hold a whole node), e.g. ${sameGpuSizes(pool.instanceType).join(", ")}`
    );
  if (pool.efa && spec.efaInterfaces === 0) return `has no EFA interface, and the pool sets efa: true`;
  const reserve = pool.daemonSetReserve;
  const alloc = nodeAllocatable(type);
  if (reserve && !leavesRayPodRoom(alloc, reserve))
    return `leaves no room for a Ray pod after the pool's daemonSetReserve (${alloc.cpuMillis}m, ${alloc.memoryMiB} MiB)`;
  return undefined;
}

/** The other sizes of the catalog with as many GPUs per node as `type`. */
const sameGpuSizes = (type: GpuInstanceType) =>
  GPU_INSTANCE_TYPES.filter((t) => t !== type && GPU_INSTANCES[t].gpus === GPU_INSTANCES[type].gpus);

/** The node group names of a pool's fallback sizes (with their spot groups where the pool has them). */
function fallbackGroups(pool: Pool): string[] {
  return pool.fallbackInstanceTypes.flatMap((t) => {
    const name = fallbackGroupName(pool.name, t);
    return pool.capacityType === "spot-with-fallback" ? [spotGroupName(name), name] : [name];
  });
}

/** Group names EKS can hold, and that no pool or other group has. */
function checkGroupNames(cfg: FallbackShape, addIssue: AddIssue): void {
  const { cpuNodeGroup, gpuNodeGroups } = cfg.platform;
  const taken = new Set([cpuNodeGroup.name, ...gpuNodeGroups.map((p) => p.name)]);
  gpuNodeGroups.forEach((pool, i) => {
    const path = ["platform", "gpuNodeGroups", i, "name"];
    for (const group of fallbackGroups(pool)) {
      if (group.length > MAX_POOL_NAME)
        addIssue(
          path,
          `makes the fallback node group "${group}" (${group.length} characters), and EKS takes node group names of ` +
            `at most ${MAX_POOL_NAME} here (63 with the 26-character suffix): shorten the pool's name`,
        );
      if (taken.has(group))
        addIssue(path, `its fallback node group would be named "${group}", as another pool or group is: rename one`);
      taken.add(group);
    }
  });
}

/** Every rule of the stack's fallback instance types. */
export function checkFallbackTypes(cfg: FallbackShape, addIssue: AddIssue): void {
  cfg.platform.gpuNodeGroups.forEach((pool, i) => {
    const path = ["platform", "gpuNodeGroups", i, "fallbackInstanceTypes"];
    pool.fallbackInstanceTypes.forEach((type, j) => {
      const problem = typeProblem(pool, type, pool.fallbackInstanceTypes.slice(0, j));
      if (problem) addIssue([...path, j], problem);
    });
    if (pool.fallbackInstanceTypes.length > 0 && !cfg.platform.queueing.enabled)
      addIssue(
        path,
        "needs platform.queueing.enabled: true: Kueue's quota (maxNodes Ray pods) is what keeps the pool's node " +
          "groups, one per size, to maxNodes nodes together; without it each could grow to maxNodes",
      );
  });
  checkGroupNames(cfg, addIssue);
}
