/** What every workload construct needs from its stack to plan and render. */
import type { Environment } from "../core/config/stack";
import { ConfigError } from "../core/errors";
import type { GpuPoolPlan, PoolsPlan } from "../core/pools";
import type { GpuInstanceType } from "../core/catalog/instances";
import type { RuntimePackage } from "./contract/configmaps";

/** The stack a workload is planned for. */
export interface WorkloadContext {
  readonly environment: Environment;
  readonly pools: PoolsPlan;
  /** Namespace of the rendered objects. */
  readonly namespace: string;
  /** The runtime package every RayJob mounts; read once at the edge with `loadRuntimePackage()`. */
  readonly runtime: RuntimePackage;
  /**
   * Service account of the Ray pods; the platform binds it to the bucket's IAM role, which lets a service account
   * write and delete under `checkpoints/<its name>/`, `results/<its name>/` and `run-records/<its name>/` only.
   * @default - the workload's name: `RayGpuPlatform` creates one per workload of its config
   */
  readonly serviceAccountName?: string;
  /**
   * Key prefix of the stack's bucket the workload writes under (checkpoints, results).
   * @default ""
   */
  readonly storagePrefix?: string;
  /**
   * Kueue LocalQueue the RayJob is submitted to (label `kueue.x-k8s.io/queue-name`, created suspended); it waits there
   * until the queue's quota admits it. `RayGpuPlatform` creates the queue `ray-gpu` when `queueing.enabled`.
   * @default - none: the RayJob starts at once
   */
  readonly queueName?: string;
  /**
   * Render the job's PrometheusRule: its alerts, with thresholds from its plan (docs/observability.md). Needs the
   * Prometheus Operator's CRDs, which `RayGpuPlatform` installs when `observability.enabled`.
   * @default false
   */
  readonly alerts?: boolean;
  /**
   * Config path of the workload for error messages.
   * @default - its kind and name, e.g. `TrainingJob "llama-ddp"`
   */
  readonly path?: string;
}

/**
 * The GPU pool a workload runs on: `nodePool` by name, else the first pool of `instanceType`, else the first GPU pool.
 * @throws ConfigError when the choice is impossible, naming the pools there are.
 */
export function resolveGpuPool(
  spec: { readonly nodePool?: string | undefined; readonly instanceType?: GpuInstanceType | undefined },
  pools: PoolsPlan,
  path: string,
): GpuPoolPlan {
  const names = pools.gpu.map((p) => `"${p.name}" (${p.instanceType})`).join(", ");
  const fail = (field: string, message: string, value: unknown): never => {
    throw new ConfigError([{ path: `${path}.${field}`, message, value }]);
  };
  if (spec.nodePool !== undefined) {
    const pool =
      pools.gpu.find((p) => p.name === spec.nodePool) ??
      fail("nodePool", `no GPU pool has this name; pools are ${names}`, spec.nodePool);
    if (spec.instanceType !== undefined && spec.instanceType !== pool.instanceType) {
      fail(
        "instanceType",
        `pool "${pool.name}" runs ${pool.instanceType}; drop instanceType or pick a pool that runs it`,
        spec.instanceType,
      );
    }
    return pool;
  }
  if (spec.instanceType !== undefined) {
    return (
      pools.gpu.find((p) => p.instanceType === spec.instanceType) ??
      fail("instanceType", `no GPU pool runs this instance type; pools are ${names}`, spec.instanceType)
    );
  }
  return pools.gpu[0] ?? fail("nodePool", "the stack has no GPU pool", undefined);
}
