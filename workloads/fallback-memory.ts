/**
 * GPU memory on a pool with fallback instance types: a job is planned to fit on every type its pods may land on. Where
 * it fits on the pool's own type but not on a fallback, the environment decides (`fallbackMisfit`): prod refuses with
 * the type named, dev plans on the pool's own type and the plan names the types it would not fit on. Pure; used by
 * `./workload.ts`.
 */
import type { GpuInstanceType } from "../core/catalog/instances";
import type { ClusterShapePlan } from "../core/cluster/shape";
import type { Environment } from "../core/config/stack";
import type { WorkloadKind } from "../core/config/workloads";
import { ENVIRONMENT_PROFILES } from "../core/environments";
import { ConfigError } from "../core/errors";
import { poolOn, type GpuPoolPlan } from "../core/pools";
import { withHostMemoryCheck } from "./host-memory";
import type { MemoryPlanOf } from "./kinds/api/strategy";

/** How a job on a pool with fallback types stands on each type. */
export interface FallbackFit {
  /** The pool's instance types in the order they are tried. */
  readonly instanceTypes: readonly GpuInstanceType[];
  /** The type whose GPU memory the job is planned against: the least of the types it is planned to fit on. */
  readonly gpuMemoryBindsOn: GpuInstanceType;
  /** Fallback types the job would not fit on (dev only: prod refuses them). */
  readonly misfits: readonly GpuInstanceType[];
}

/** Plans a job's memory on a pool: the memory plan, and on a pool of several types how it stands on each. */
export interface PoolMemory<M> {
  readonly memory: M;
  readonly fallback: FallbackFit | undefined;
}

/** Where a job's memory planning happens: its spec's planner, the shape, the environment and its config path. */
export interface FallbackMemoryInput<M> {
  readonly planMemory: (pool: GpuPoolPlan, gpus?: number) => M;
  readonly shape: ClusterShapePlan;
  readonly environment: Environment;
  readonly path: string;
  /** The pool's position under `platform.gpuNodeGroups`, for the refusal's path. */
  readonly poolIndex: number;
}

/** The memory plan on `pool` with its host-memory check. */
function planOn<M extends MemoryPlanOf<WorkloadKind>>(pool: GpuPoolPlan, input: FallbackMemoryInput<M>): M {
  return withHostMemoryCheck(input.planMemory(pool), input.shape, pool, (gpus) => input.planMemory(pool, gpus));
}

/** The refusal of the fallback types a job does not fit on. */
function refusal(pool: GpuPoolPlan, misfits: readonly GpuInstanceType[], input: FallbackMemoryInput<unknown>) {
  const at = `ray-gpu:platform.gpuNodeGroups[${input.poolIndex}].fallbackInstanceTypes`;
  return new ConfigError(
    misfits.map((t) => ({
      path: `${at}[${pool.instanceTypes.indexOf(t) - 1}]`,
      message:
        `${input.path} fits in GPU memory on ${pool.instanceType} but not on ${t}, which pool "${pool.name}" may ` +
        `start when ${pool.instanceType} has no capacity: in ${input.environment} a job must fit on every type of ` +
        `its pool; remove ${t} from fallbackInstanceTypes, or change the job so it fits on ${t}`,
      value: t,
    })),
  );
}

/**
 * The memory of a job on `pool`: planned on what every node of the pool offers; where only a fallback type is what
 * does not fit, refused (prod) or planned on the pool's own type with the misfits named (dev).
 * @throws ConfigError listing each fallback type the job does not fit on, where the environment refuses them.
 */
export function planPoolMemory<M extends MemoryPlanOf<WorkloadKind>>(
  pool: GpuPoolPlan,
  input: FallbackMemoryInput<M>,
): PoolMemory<M> {
  const floor = planOn(pool, input);
  if (pool.instanceTypes.length === 1) return { memory: floor, fallback: undefined };
  const fit = (misfits: readonly GpuInstanceType[], bindsOn: GpuInstanceType): FallbackFit => ({
    instanceTypes: pool.instanceTypes,
    gpuMemoryBindsOn: bindsOn,
    misfits,
  });
  if (floor.fits) return { memory: floor, fallback: fit([], pool.node.binding.usableGpuMemoryGiB) };
  const own = planOn(poolOn(pool, pool.instanceType), input);
  if (!own.fits) return { memory: floor, fallback: fit([], pool.node.binding.usableGpuMemoryGiB) };
  const misfits = pool.instanceTypes.slice(1).filter((t) => !planOn(poolOn(pool, t), input).fits);
  if (misfits.length > 0 && ENVIRONMENT_PROFILES[input.environment].fallbackMisfit === "refuse")
    throw refusal(pool, misfits, input);
  return { memory: own, fallback: fit(misfits, pool.instanceType) };
}
