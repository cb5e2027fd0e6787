/**
 * A job's forecast from its kind's step model: the work the spec declares, the startup before it, wall time,
 * GPU-hours, cost at the pool's price and the share of the wall time the GPUs compute. Pure.
 */
import { GPU_INSTANCES } from "../catalog/instances";
import { round2, round3 } from "../quantity";
import { usdPerNodeHour, type GpuPoolPlan } from "../pools";
import { DOWNLOAD_NETWORK_SHARE, NETWORK_EFFICIENCY, PCIE_COLLECTIVE_GBPS, RAY_START_SECONDS } from "./calibration";
import type { Forecast, ForecastBound, ForecastWork, Links, Transport } from "./types";

/** What the job's nodes offer and cost. */
export interface JobNodes {
  /** The job's GPU nodes (its Ray worker pods, one per node). */
  readonly nodes: number;
  readonly gpus: number;
  readonly networkBaselineMbps: number;
  /** On-demand price of one node, USD per hour (a pool with fallback sizes: its dearest). */
  readonly usdPerNodeHour: number;
  /** Whether the nodes may be spot (capacity type spot or spot-with-fallback). */
  readonly spot: boolean;
  /** Whether every size of the pool has an EFA interface (the scaling forecast then shows EFA too). */
  readonly efaCapable: boolean;
}

/** The job's GPU nodes on `pool` as the forecast prices them: its worker pods (one per node) at the pool's dearest size. */
export function jobNodesOn(pool: GpuPoolPlan, nodes: number, gpus: number): JobNodes {
  return {
    nodes,
    gpus,
    networkBaselineMbps: pool.node.networkBaselineMbps,
    usdPerNodeHour: usdPerNodeHour(pool.instanceTypes),
    spot: pool.capacityType !== "on-demand",
    efaCapable: pool.instanceTypes.every((t) => GPU_INSTANCES[t].efaInterfaces > 0),
  };
}

/** The work's time as a kind's model splits it. */
export interface WorkTime {
  readonly work: ForecastWork;
  readonly busySeconds: number;
  readonly waitSeconds: number;
  readonly unitSeconds: number;
  readonly bound: ForecastBound;
  /** Bytes of weights each node downloads before the work starts. */
  readonly modelBytes: number;
}

/** The links collectives run over on `node`: PCIe within it, its network between nodes over `transport`. */
export const linksOf = (networkBaselineMbps: number, transport: Transport): Links => ({
  intraNodeGBps: PCIE_COLLECTIVE_GBPS,
  interNodeGBps: (networkBaselineMbps / 8000) * NETWORK_EFFICIENCY[transport].share,
});

/** Ray's start and the model's download at the node's share of its network. */
export const startupSeconds = (modelBytes: number, networkBaselineMbps: number) =>
  RAY_START_SECONDS + modelBytes / (((networkBaselineMbps * 1e6) / 8) * DOWNLOAD_NETWORK_SHARE);

/** The forecast of a job doing `t` on `n`. */
export function jobForecast(t: WorkTime, n: JobNodes): Forecast {
  const startup = startupSeconds(t.modelBytes, n.networkBaselineMbps);
  const workSeconds = t.busySeconds + t.waitSeconds;
  const wall = startup + workSeconds;
  return {
    work: t.work,
    wallSeconds: Math.ceil(wall),
    startupSeconds: Math.ceil(startup),
    gpuHours: round3((wall * n.gpus) / 3600),
    costUsd: round2((wall / 3600) * n.nodes * n.usdPerNodeHour),
    costIsUpperBound: n.spot,
    gpuUtilization: round3(Math.max(1e-3, t.busySeconds / wall)),
    bound: t.bound,
    unitSeconds: round3(t.unitSeconds),
    waitShare: round3(workSeconds > 0 ? t.waitSeconds / workSeconds : 0),
  };
}

/** Wall time as the plan prints it: "2 h 05 min", "14 min", "45 s". */
export function durationText(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  return h >= 48 ? `${Math.round(minutes / 144) / 10} days` : `${h} h ${String(m).padStart(2, "0")} min`;
}
