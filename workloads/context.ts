/** What every workload construct needs from its stack to plan and render. */
import type { Environment } from "../core/config/stack";
import { IssueCollector } from "../core/errors";
import type { GpuPoolPlan, PoolsPlan } from "../core/pools";
import type { GpuInstanceType } from "../core/catalog/instances";

/** The stack a workload is planned for. */
export interface WorkloadContext {
  readonly environment: Environment;
  readonly pools: PoolsPlan;
  /** Namespace of the rendered objects. */
  readonly namespace: string;
  /**
   * Service account of the Ray pods; the platform binds it to the bucket's IAM role.
   * @default "ray-workloads" (what `RayGpuPlatform` creates)
   */
  readonly serviceAccountName?: string;
  /**
   * Key prefix of the stack's bucket the workload writes under (checkpoints, results).
   * @default ""
   */
  readonly storagePrefix?: string;
  /**
   * Config path of the workload for error messages.
   * @default "workload"
   */
  readonly path?: string;
}

/**
 * The GPU pool a workload runs on: `nodePool` by name, else the first pool of `instanceType`, else the first
 * GPU pool. Records a problem (and returns undefined) when the choice is impossible.
 */
export function resolveGpuPool(
  spec: { readonly nodePool?: string | undefined; readonly instanceType?: GpuInstanceType | undefined },
  pools: PoolsPlan,
  path: string,
  issues: IssueCollector,
): GpuPoolPlan | undefined {
  const names = pools.gpu.map((p) => `"${p.name}" (${p.instanceType})`).join(", ");
  if (spec.nodePool !== undefined) {
    const pool = pools.gpu.find((p) => p.name === spec.nodePool);
    if (!pool) {
      issues.add(`${path}.nodePool`, `no GPU pool has this name; pools are ${names}`, spec.nodePool);
      return undefined;
    }
    if (spec.instanceType !== undefined && spec.instanceType !== pool.instanceType) {
      issues.add(`${path}.instanceType`, `pool "${pool.name}" runs ${pool.instanceType}; drop instanceType or pick a pool that runs it`, spec.instanceType);
      return undefined;
    }
    return pool;
  }
  if (spec.instanceType !== undefined) {
    const pool = pools.gpu.find((p) => p.instanceType === spec.instanceType);
    if (!pool) issues.add(`${path}.instanceType`, `no GPU pool runs this instance type; pools are ${names}`, spec.instanceType);
    return pool;
  }
  return pools.gpu[0];
}
