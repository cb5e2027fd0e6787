/**
 * The rules on GPU pools' capacity that span fields: spot alone only where the environment allows it; the spot wait of
 * spot-with-fallback pools (given only with that capacity type, and one value for all: it is the Cluster Autoscaler's
 * `--max-node-provision-time`); the queue that holds a fallback pool's two node groups to `maxNodes` together; and a
 * spot group name EKS can hold and no other pool has. Pure; `./stack.ts` runs them with the other rules.
 *
 * Sources: {@link MAX_POOL_NAME} for node group names; kubernetes/autoscaler cluster-autoscaler-1.36.1
 * `cloudprovider/aws/aws_manager.go` (`GetAsgOptions` reads no per-group `maxnodeprovisiontime`, so the flag is one
 * value for every node group).
 */
import { capacityAllowed } from "../environments";
import { ENVIRONMENTS, type Environment } from "./environment-names";
import { MAX_POOL_NAME, SPOT_GROUP_SUFFIX, SPOT_WAIT_MINUTES, spotGroupName, type GpuCapacityType } from "./platform";

type AddIssue = (path: (string | number)[], message: string) => void;

/** What the capacity rules read of a stack. */
interface CapacityShape {
  readonly environment: Environment;
  readonly platform: {
    readonly cpuNodeGroup: { readonly name: string };
    readonly gpuNodeGroups: readonly {
      readonly name: string;
      readonly capacityType: GpuCapacityType;
      readonly spotWaitMinutes?: number | undefined;
    }[];
    readonly queueing: { readonly enabled: boolean };
  };
}

/** The minutes a pool waits for spot: its own, or the default of a spot-with-fallback pool. */
const waitOf = (pool: CapacityShape["platform"]["gpuNodeGroups"][number]) =>
  pool.spotWaitMinutes ?? SPOT_WAIT_MINUTES.default;

/** Spot alone only where the environment allows it; the fix names spot-with-fallback. */
function spotProblem(environment: Environment, capacityType: GpuCapacityType): string | undefined {
  if (capacityAllowed(environment, capacityType)) return undefined;
  const where = ENVIRONMENTS.filter((e) => capacityAllowed(e, "spot")).join(", ");
  return (
    `spot is allowed in ${where} only: an interruption kills every NCCL rank of a job; use "spot-with-fallback" ` +
    `(spot first, on-demand when spot has no node within spotWaitMinutes) or "on-demand" in ${environment}`
  );
}

/** `spotWaitMinutes` only with spot-with-fallback, and the same in every such pool (one autoscaler flag). */
function checkSpotWait(cfg: CapacityShape, addIssue: AddIssue): void {
  const pools = cfg.platform.gpuNodeGroups;
  const first = pools.find((p) => p.capacityType === "spot-with-fallback");
  pools.forEach((pool, i) => {
    const path = ["platform", "gpuNodeGroups", i, "spotWaitMinutes"];
    if (pool.capacityType !== "spot-with-fallback") {
      if (pool.spotWaitMinutes !== undefined)
        addIssue(
          path,
          `applies to capacityType "spot-with-fallback" only, and this pool is "${pool.capacityType}": drop it, or ` +
            `set capacityType: spot-with-fallback`,
        );
    } else if (first && waitOf(pool) !== waitOf(first))
      addIssue(
        path,
        `is ${waitOf(pool)} minutes, but pool "${first.name}" waits ${waitOf(first)}: the wait is the Cluster ` +
          `Autoscaler's --max-node-provision-time, one value for every node group; give every spot-with-fallback ` +
          `pool the same spotWaitMinutes (${SPOT_WAIT_MINUTES.default} when none is given)`,
      );
  });
}

/** A fallback pool needs the queue: its quota is what holds the spot and on-demand groups to maxNodes together. */
function fallbackProblem(cfg: CapacityShape, capacityType: GpuCapacityType): string | undefined {
  if (capacityType !== "spot-with-fallback" || cfg.platform.queueing.enabled) return undefined;
  return (
    "spot-with-fallback needs platform.queueing.enabled: true: Kueue's quota (maxNodes Ray pods) is what keeps the " +
    "pool's spot and on-demand node groups to maxNodes nodes together; without it each could grow to maxNodes"
  );
}

/** A fallback pool's spot group `<name>-spot`: short enough for EKS, and named like no other pool. */
function checkSpotGroupNames(cfg: CapacityShape, addIssue: AddIssue): void {
  const { cpuNodeGroup, gpuNodeGroups } = cfg.platform;
  const names = new Set([cpuNodeGroup.name, ...gpuNodeGroups.map((p) => p.name)]);
  gpuNodeGroups.forEach((pool, i) => {
    if (pool.capacityType !== "spot-with-fallback") return;
    const path = ["platform", "gpuNodeGroups", i, "name"];
    const spot = spotGroupName(pool.name);
    if (spot.length > MAX_POOL_NAME)
      addIssue(
        path,
        `makes the spot node group "${spot}" (${spot.length} characters), and EKS takes node group names of at most ` +
          `${MAX_POOL_NAME} here (63 with the 26-character suffix): a spot-with-fallback pool's name is at most ` +
          `${MAX_POOL_NAME - SPOT_GROUP_SUFFIX.length} characters`,
      );
    if (names.has(spot))
      addIssue(path, `its spot node group would be named "${spot}", as another pool is: rename one of the two pools`);
  });
}

/** Every capacity rule of a stack's GPU pools. */
export function checkCapacity(cfg: CapacityShape, addIssue: AddIssue): void {
  cfg.platform.gpuNodeGroups.forEach((pool, i) => {
    const path = ["platform", "gpuNodeGroups", i, "capacityType"];
    for (const problem of [spotProblem(cfg.environment, pool.capacityType), fallbackProblem(cfg, pool.capacityType)])
      if (problem) addIssue(path, problem);
  });
  checkSpotWait(cfg, addIssue);
  checkSpotGroupNames(cfg, addIssue);
}
