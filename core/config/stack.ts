/**
 * One schema for everything under the `ray-gpu:` namespace of `Pulumi.<stack>.yaml`:
 *
 * ```yaml
 * config:
 *   ray-gpu:environment: dev          # dev | prod
 *   ray-gpu:region: us-east-1
 *   ray-gpu:platform: { cluster, cpuNodeGroup, gpuNodeGroups, storage, workloadNamespace }
 *   ray-gpu:workloads: [ ... ]
 * ```
 *
 * `stacks/index.ts` (through Pulumi config) and the CLI (through the YAML file) both parse with
 * {@link parseStackConfig}, so they accept and reject exactly the same input.
 */
import { z } from "zod";
import { ConfigError, type ConfigIssue } from "../errors";
import { leavesRayPodRoom, nodeAllocatable } from "../catalog/eks-allocatable";
import { GPU_INSTANCES } from "../catalog/instances";
import { ENVIRONMENT_PROFILES } from "../environments";
import { checkCapacity } from "./capacity";
import { checkFallbackTypes } from "./fallback-types";
import { EVERY_ADDRESS, PlatformSchema } from "./platform";
import { publicAddressCount } from "./address-set";
import { unroutableEntries, unroutableMessage } from "./api-endpoint";
import { RegionSchema } from "./aws-rules";
import { WorkloadSpecSchema } from "./workloads";
import { ENVIRONMENTS, type Environment } from "./environment-names";
import { unverifiedPipIssues } from "./pip";
import type { PlatformConfig } from "./types";
import { joinPath, toConfigIssues } from "./zod-issues";

/** The config namespace, as in `ray-gpu:platform`. */
export const CONFIG_NAMESPACE = "ray-gpu";

export { ENVIRONMENTS, type Environment } from "./environment-names";

type AddIssue = (path: (string | number)[], message: string) => void;
/** The validated shape of the keys, before the rules that span them. */
type StackShape = {
  environment: Environment;
  region: string;
  platform: PlatformConfig;
  workloads: { name: string }[];
};
type GpuPool = StackShape["platform"]["gpuNodeGroups"][number];

/** Every pool: min <= max, and a name no other pool has (one pass, a set of names). */
function checkPools(cfg: StackShape, addIssue: AddIssue): void {
  const pools = [cfg.platform.cpuNodeGroup, ...cfg.platform.gpuNodeGroups];
  const seen = new Set<string>();
  pools.forEach((pool, i) => {
    const path = i === 0 ? ["platform", "cpuNodeGroup"] : ["platform", "gpuNodeGroups", i - 1];
    if (pool.minNodes > pool.maxNodes) {
      addIssue([...path, "minNodes"], `minNodes (${pool.minNodes}) must be <= maxNodes (${pool.maxNodes})`);
    }
    if (seen.has(pool.name))
      addIssue([...path, "name"], `pool name "${pool.name}" is used twice; pool names must be unique`);
    seen.add(pool.name);
    const room = reserveProblem(pool);
    if (room) addIssue([...path, "daemonSetReserve"], room);
  });
}

/** Why a pool's DaemonSet reserve leaves no Ray pod room on its nodes (at least 1 CPU and 1 GiB), or undefined. */
function reserveProblem(
  pool: StackShape["platform"]["cpuNodeGroup"] | StackShape["platform"]["gpuNodeGroups"][number],
) {
  const reserve = pool.daemonSetReserve;
  if (!reserve) return undefined;
  const alloc = nodeAllocatable(pool.instanceType);
  if (leavesRayPodRoom(alloc, reserve)) return undefined;
  return (
    `leaves no room for a Ray pod: a ${pool.instanceType} node has ${alloc.cpuMillis}m CPU and ${alloc.memoryMiB} ` +
    `MiB allocatable, and ${reserve.cpuMillis}m and ${reserve.memoryMiB} MiB are reserved for DaemonSets; a Ray pod ` +
    `needs at least 1 CPU and 1 GiB: lower the reserve or use a larger instanceType`
  );
}

/** An EFA pool lives in one subnet (EFA's OS-bypass traffic does not leave it) and one cluster placement group. */
function efaPoolProblems(pool: GpuPool, region: string, path: (string | number)[], addIssue: AddIssue): void {
  if (!pool.availabilityZone)
    addIssue(
      [...path, "availabilityZone"],
      "an EFA pool needs one: EFA's OS-bypass traffic does not leave its subnet, so the pool's nodes must share one " +
        `(the zone's first private subnet): set availabilityZone, e.g. "${region}a"`,
    );
  if (pool.clusterPlacementGroup === false)
    addIssue(
      [...path, "clusterPlacementGroup"],
      "an EFA pool's nodes launch in one cluster placement group, so a job's workers are never split between groups: " +
        "leave clusterPlacementGroup out or set it true",
    );
}

/** GPU pools: EFA, placement groups and zones (their capacity: `./capacity.ts`). */
function checkGpuPools(cfg: StackShape, addIssue: AddIssue): void {
  const { platform } = cfg;
  platform.gpuNodeGroups.forEach((pool, i) => {
    const path = ["platform", "gpuNodeGroups", i];
    if (pool.efa && GPU_INSTANCES[pool.instanceType].efaInterfaces === 0) {
      addIssue(
        [...path, "efa"],
        `${pool.instanceType} has no EFA interface; use an 8xlarge or larger size, or set efa: false`,
      );
    } else if (pool.efa) efaPoolProblems(pool, cfg.region, path, addIssue);
    if (pool.clusterPlacementGroup && !pool.availabilityZone) {
      addIssue(
        [...path, "clusterPlacementGroup"],
        "a cluster placement group lives in one zone: set availabilityZone too",
      );
    }
    if (pool.availabilityZone && !pool.availabilityZone.startsWith(cfg.region)) {
      addIssue([...path, "availabilityZone"], `zone "${pool.availabilityZone}" is not in region ${cfg.region}`);
    } else if (
      pool.availabilityZone &&
      platform.cluster.mode === "create" &&
      !platform.network.availabilityZoneNames?.includes(pool.availabilityZone)
    ) {
      addIssue(
        [...path, "availabilityZone"],
        `the new VPC needs a subnet in "${pool.availabilityZone}": list it in ray-gpu:platform.network.availabilityZoneNames`,
      );
    }
  });
}

/**
 * The keys under `ray-gpu:`, without the namespace.
 * @internal
 */
export const StackConfigSchema = z
  .strictObject({
    /** Which environment profile to apply (lifecycle, deadlines, retries, capacity rules). */
    environment: z.enum(ENVIRONMENTS),
    /** AWS region of the stack. */
    region: RegionSchema,
    /** Cluster, node pools and storage. */
    platform: PlatformSchema,
    /**
     * The workloads rendered as RayJobs.
     * @default []
     */
    workloads: z.array(WorkloadSpecSchema).default([]),
  })
  .superRefine((cfg, ctx) => {
    const addIssue: AddIssue = (path, message) => ctx.addIssue({ code: "custom", path, message });
    checkPools(cfg, addIssue);
    checkGpuPools(cfg, addIssue);
    checkCapacity(cfg, addIssue);
    checkFallbackTypes(cfg, addIssue);
    checkApiEndpoint(cfg, addIssue);
    const seen = new Set<string>();
    cfg.workloads.forEach((w, i) => {
      for (const p of unverifiedPipIssues(w.runtimeEnv?.pip, cfg.environment))
        addIssue(["workloads", i, "runtimeEnv", "pip", p.index], p.message);
      for (const name of Object.keys(w.secretEnv).filter((n) => n in w.env))
        addIssue(["workloads", i, "secretEnv", name], `${name} is also set in env: keep it in secretEnv only`);
      if (seen.has(w.name))
        addIssue(["workloads", i, "name"], `workload name "${w.name}" is used twice; names must be unique`);
      seen.add(w.name);
    });
  });

/**
 * A prod API endpoint open to the internet is refused: narrow it to known networks, or make it private. Ranges given
 * for a private endpoint are refused too: EKS applies them to the public endpoint only, so they would be ignored. In
 * every environment, a range with no public address (documentation, private, loopback...: `./api-endpoint.ts`)
 * is refused: it admits nobody, and the deploy fails once the cluster exists.
 */
function checkApiEndpoint(cfg: StackShape, addIssue: AddIssue): void {
  const c = cfg.platform.cluster;
  if (c.mode !== "create") return;
  const leftAtDefault = c.publicAccessCidrs.length === 1 && c.publicAccessCidrs[0] === EVERY_ADDRESS;
  if (!c.publicEndpoint && !leftAtDefault)
    addIssue(
      ["platform", "cluster", "publicAccessCidrs"],
      "applies to a public API endpoint only, and publicEndpoint is false: EKS would ignore it; drop it, or set " +
        "publicEndpoint: true",
    );
  if (!c.publicEndpoint) return;
  for (const e of unroutableEntries(c.publicAccessCidrs))
    addIssue(["platform", "cluster", "publicAccessCidrs", e.index], unroutableMessage(e));
  if (ENVIRONMENT_PROFILES[cfg.environment].platform.openApiEndpoint) return;
  const open = publicAddressCount(c.publicAccessCidrs);
  if (open >= MAX_PUBLIC_API_ADDRESSES)
    addIssue(
      ["platform", "cluster", "publicAccessCidrs"],
      `a ${cfg.environment} API endpoint open to ${open.toLocaleString("en-US")} public addresses ` +
        `(${((open / PUBLIC_INTERNET_ADDRESSES) * 100).toFixed(1)}% of the internet; the default 0.0.0.0/0 is all) is ` +
        `refused, however the ranges are written: list the CIDRs of your networks (VPN, CI runners; together fewer ` +
        `than a /8), or set publicEndpoint: false`,
    );
}

/** Public addresses of the whole internet: every IPv4 address less the special-purpose ranges. */
const PUBLIC_INTERNET_ADDRESSES = publicAddressCount([EVERY_ADDRESS]);
/** A prod API endpoint may admit fewer public addresses than this together: a /8's worth. */
export const MAX_PUBLIC_API_ADDRESSES = 2 ** 24;

export type { StackConfig, StackConfigInput } from "./types";
import type { StackConfig } from "./types";

/** The `ray-gpu:` entries of a Pulumi config map, namespace stripped; other namespaces (aws:, …) are left out. */
export function namespaceKeys(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const prefix = `${CONFIG_NAMESPACE}:`;
  return Object.fromEntries(
    Object.entries(config)
      .filter(([k]) => k.startsWith(prefix))
      .map(([k, v]) => [k.slice(prefix.length), v]),
  );
}

/** Renders a schema path as a Pulumi config path: `ray-gpu:platform.gpuNodeGroups[0].instanceType`. */
export function configPath(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path;
  if (head === undefined) return `${CONFIG_NAMESPACE}:`;
  const tail = joinPath(rest);
  return `${CONFIG_NAMESPACE}:${String(head)}${tail === "" ? "" : tail.startsWith("[") ? tail : `.${tail}`}`;
}

/**
 * Validates the `ray-gpu:` keys of a stack (namespace stripped: `{ environment, region, platform, workloads }`).
 * @throws ConfigError listing every problem, each with its config path, the value and the rule.
 */
export function parseStackConfig(raw: unknown, source?: string): StackConfig {
  const result = StackConfigSchema.safeParse(raw);
  if (result.success) return result.data;
  const issues: ConfigIssue[] = toConfigIssues(result.error, StackConfigSchema, raw, configPath);
  throw new ConfigError(issues, source);
}

/**
 * Validates `ray-gpu:platform` alone and applies its defaults, for programs that build single components (the
 * rules that span the platform and the workloads, such as prod's capacity rules, need `parseStackConfig`).
 * @param source Named first in the error message (a file, a stack).
 * @throws ConfigError listing every problem, each with its path under `ray-gpu:platform`.
 */
export function parsePlatformConfig(raw: unknown, source?: string): PlatformConfig {
  const result = PlatformSchema.safeParse(raw);
  if (result.success) return result.data;
  const label = (path: readonly PropertyKey[]) => configPath(["platform", ...path]);
  throw new ConfigError(toConfigIssues(result.error, PlatformSchema, raw, label), source);
}
