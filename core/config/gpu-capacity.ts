/**
 * Where a GPU pool's nodes come from, and the names of the node groups that hold them: capacity types, the spot wait,
 * and the groups of spot-with-fallback pools and of fallback instance types. Re-exported by `./platform.ts`.
 */

/**
 * Where a GPU pool's nodes come from: on-demand, spot (dev only), or spot with an on-demand fallback (a spot node
 * group and an on-demand one; see `core/platform/spot-fallback.ts`).
 */
export const GPU_CAPACITY_TYPES = ["on-demand", "spot", "spot-with-fallback"] as const;
/** A GPU pool's capacity type. */
export type GpuCapacityType = (typeof GPU_CAPACITY_TYPES)[number];

/**
 * `spotWaitMinutes` of a spot-with-fallback pool that sets none, and its range. It becomes the Cluster Autoscaler's
 * `--max-node-provision-time`, which applies to every node group: at least 5 minutes, so a healthy g5 node (EC2 launch
 * plus the AL2023 boot and join, a few minutes) is never given up on; at most 10, so an on-demand node started then
 * still has about 5 minutes to come up and pull its image within Kueue's 15-minute `waitForPodsReady`.
 */
export const SPOT_WAIT_MINUTES = { default: 10, min: 5, max: 10 } as const;

/** Suffix of the spot node group of a spot-with-fallback pool: the pool's on-demand group keeps the pool's name. */
export const SPOT_GROUP_SUFFIX = "-spot";
/** The spot node group's name of the spot-with-fallback pool `pool`. */
export const spotGroupName = (pool: string) => `${pool}${SPOT_GROUP_SUFFIX}`;

/** Most fallback instance types one pool may name. */
export const MAX_FALLBACK_INSTANCE_TYPES = 3;
/**
 * The node group of a pool's fallback instance type `type`: `<pool>-<type, "." as "-">` (`gpu-g6-12xlarge`), and
 * `<that>-spot` for its spot group. The pool's own type keeps the pool's name, so adding a fallback replaces nothing.
 */
export const fallbackGroupName = (pool: string, type: string) => `${pool}-${type.replace(".", "-")}`;
