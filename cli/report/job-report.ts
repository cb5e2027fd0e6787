/**
 * One job's report: what Prometheus measured over its lifetime next to what its plan promised, and a verdict line.
 * Pure: the measurements come in, the document goes out (text and JSON views in ./view).
 */
import type { GpuCapacityType } from "../../core/config/platform";
import type { Forecast } from "../../core/forecast/types";
import { GIB, round2, round3 } from "../../core/quantity";
import type { Measured } from "./prometheus";

const MIB_PER_GIB = 1024;

/** What the plan promised the job would do (from `ray-gpu plan`). */
export interface Promised {
  readonly workload: string;
  readonly kind: string;
  readonly namespace: string;
  readonly gpuUtilizationTargetPercent: number;
  /** GPU memory the plan needs per GPU (its estimate), and what a GPU offers. */
  readonly requiredGiB: number;
  readonly usableGiB: number;
  readonly gpus: number;
  readonly workers: number;
  /**
   * Price of one of the job's GPU nodes, USD per hour: the catalog's approximate us-east-1 on-demand price
   * (core/catalog/instances.ts), the only price it knows, whatever the pool's capacity type (see {@link PRICE_OF}).
   */
  readonly usdPerNodeHour: number;
  /** Where the job's GPU pool gets its nodes. */
  readonly capacityType: GpuCapacityType;
  /**
   * The pool's instance types, its own first: with fallback sizes the node price is the dearest's, an upper bound.
   */
  readonly instanceTypes: readonly string[];
  /** The plan's forecast of one run (core/forecast/), or null where the spec did not say enough. */
  readonly forecast: Forecast | null;
}

/**
 * What the report's node price is, by the pool's capacity type. The catalog has on-demand prices only, and plan prices
 * every pool at them (core/pools.ts `usdPerHourAtMax`); a spot node costs at most that (EC2's default maximum spot
 * price is the on-demand price), so for a spot pool the cost is an upper bound, and said to be one.
 */
export const PRICE_OF: Readonly<Record<GpuCapacityType, { readonly upperBound: boolean; readonly label: string }>> = {
  "on-demand": { upperBound: false, label: "GPU nodes, on demand" },
  spot: { upperBound: true, label: "GPU nodes, spot: at the on-demand price, an upper bound" },
  "spot-with-fallback": {
    upperBound: true,
    label: "GPU nodes, spot with fallback: at the on-demand price, an upper bound",
  },
};

/** What the report's cost line says of its price: the capacity type's label, and the dearest of fallback sizes. */
export function priceLabel(usage: JobReport["usage"]): string {
  const base = PRICE_OF[usage.capacityType].label;
  const sizes = usage.pricedAtDearestOf;
  return sizes ? `${base}; at the dearest of ${sizes.join(", ")}, an upper bound` : base;
}

/** The report document (`ray-gpu report --json`). */
export interface JobReport {
  readonly job: string;
  readonly kind: string;
  readonly namespace: string;
  readonly window: { readonly from: string; readonly to: string; readonly seconds: number };
  readonly gpuUtilization: {
    readonly averagePercent: number | null;
    readonly p10Percent: number | null;
    readonly targetPercent: number;
    readonly perWorker: readonly {
      readonly pod: string;
      readonly averagePercent: number;
      readonly p10Percent: number;
    }[];
  };
  readonly gpuMemory: { readonly peakGiB: number | null; readonly plannedGiB: number; readonly usableGiB: number };
  readonly spilledBytes: { readonly peak: number; readonly planned: 0 };
  readonly rayDataRowsPerSecond: Readonly<Record<string, number>>;
  /** Share of the training loop's time spent waiting for input (the runtime's telemetry); null without it. */
  readonly dataWaitFraction: number | null;
  readonly samplesPerSecond: number | null;
  readonly tokensPerSecond: number | null;
  readonly usage: {
    readonly gpuHours: number;
    readonly nodeHours: number;
    /** The catalog's on-demand price of a node, USD per hour. */
    readonly usdPerNodeHour: number;
    /** Node-hours at `usdPerNodeHour`: what it cost on demand, at most what it cost on spot. */
    readonly usd: number;
    readonly plannedGpus: number;
    /** The job's GPU pool's capacity type. */
    readonly capacityType: GpuCapacityType;
    /**
     * Whether `usd` is an upper bound (a spot pool priced at on demand, or a pool with fallback sizes priced at the
     * dearest) rather than the price.
     */
    readonly usdIsUpperBound: boolean;
    /** A pool with fallback sizes: its sizes, whose dearest `usdPerNodeHour` is. Absent for a pool of one size. */
    readonly pricedAtDearestOf?: readonly string[];
  };
  /**
   * The plan's forecast of one run beside what the window measured: wall time, GPU-hours, cost and GPU utilization
   * (the forecast's computing share; DCGM's utilization also counts collectives), and measured over forecast. Null
   * where the plan has no forecast.
   */
  readonly forecast: ForecastCheck | null;
  readonly verdict: { readonly kept: boolean; readonly line: string; readonly shortfalls: readonly string[] };
  /** Each worker's average GPU utilization over the window, `[unix seconds, %]` every `stepSeconds`. */
  readonly timeline: Timeline;
}

/** One run's figures, forecast or measured. */
export interface RunFigures {
  readonly wallSeconds: number;
  readonly gpuHours: number;
  readonly costUsd: number;
  readonly gpuUtilizationPercent: number | null;
}

/** The forecast against the measured window. */
export interface ForecastCheck {
  readonly forecast: RunFigures;
  readonly measured: RunFigures;
  /** Measured over forecast: wall time and cost (above 1: the run took longer or cost more than forecast). */
  readonly wallRatio: number;
  readonly costRatio: number;
}

/** The forecast of `p` beside the window's measurements. */
function forecastCheck(p: Promised, m: Measured, seconds: number, usd: number): ForecastCheck | null {
  const f = p.forecast;
  if (!f) return null;
  const measured = {
    wallSeconds: seconds,
    gpuHours: round3(m.gpuHours),
    costUsd: usd,
    gpuUtilizationPercent: orNull(m.averagePercent),
  };
  const forecast = {
    wallSeconds: f.wallSeconds,
    gpuHours: f.gpuHours,
    costUsd: f.costUsd,
    gpuUtilizationPercent: round3(f.gpuUtilization * 100),
  };
  return { forecast, measured, wallRatio: round3(seconds / f.wallSeconds), costRatio: round3(usd / f.costUsd) };
}

/** The utilization timeline of the report. */
export interface Timeline {
  readonly stepSeconds: number;
  readonly perWorker: readonly { readonly pod: string; readonly points: readonly (readonly [number, number])[] }[];
}

const iso = (s: number) => new Date(s * 1000).toISOString().replace(".000Z", "Z");
const orNull = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? null : round3(n));

/** Where the job fell short of its plan, one phrase each; empty when it kept it. */
function shortfalls(p: Promised, m: Measured): string[] {
  const out: string[] = [];
  if (m.averagePercent === undefined) out.push("no GPU utilization was recorded");
  else if (m.averagePercent < p.gpuUtilizationTargetPercent)
    out.push(`GPU utilization ${m.averagePercent.toFixed(1)}% is below its ${p.gpuUtilizationTargetPercent}% target`);
  const peak = m.peakMemoryMiB === undefined ? undefined : m.peakMemoryMiB / MIB_PER_GIB;
  if (peak !== undefined && peak > p.usableGiB)
    out.push(`peak GPU memory ${peak.toFixed(2)} GiB is above the ${p.usableGiB} GiB a GPU offers`);
  if (m.spilledBytes > 0) out.push(`${(m.spilledBytes / GIB).toFixed(2)} GiB spilled (the plan spills nothing)`);
  return out;
}

/** The verdict line: kept or fell short, with the headline numbers. */
function verdictLine(p: Promised, m: Measured, short: readonly string[]): string {
  if (short.length > 0) return `${p.workload} fell short of its plan: ${short.join("; ")}`;
  const peak = ((m.peakMemoryMiB ?? 0) / MIB_PER_GIB).toFixed(2);
  return (
    `${p.workload} kept its plan: ${m.averagePercent!.toFixed(1)}% average GPU utilization (target ` +
    `${p.gpuUtilizationTargetPercent}%), peak GPU memory ${peak} GiB (planned ${p.requiredGiB}), nothing spilled`
  );
}

/** The report of one job over `[fromSeconds, toSeconds]`. */
export function jobReport(
  p: Promised,
  m: Measured,
  { fromSeconds, toSeconds }: { readonly fromSeconds: number; readonly toSeconds: number },
  timeline: Timeline,
): JobReport {
  const short = shortfalls(p, m);
  const usd = round2(m.nodeHours * p.usdPerNodeHour);
  return {
    job: p.workload,
    kind: p.kind,
    namespace: p.namespace,
    window: { from: iso(fromSeconds), to: iso(toSeconds), seconds: toSeconds - fromSeconds },
    gpuUtilization: {
      averagePercent: orNull(m.averagePercent),
      p10Percent: orNull(m.p10Percent),
      targetPercent: p.gpuUtilizationTargetPercent,
      perWorker: m.perWorker.map((w) => ({
        pod: w.pod,
        averagePercent: round3(w.averagePercent),
        p10Percent: round3(w.p10Percent),
      })),
    },
    gpuMemory: {
      peakGiB: m.peakMemoryMiB === undefined ? null : round3(m.peakMemoryMiB / MIB_PER_GIB),
      plannedGiB: p.requiredGiB,
      usableGiB: p.usableGiB,
    },
    spilledBytes: { peak: m.spilledBytes, planned: 0 },
    rayDataRowsPerSecond: Object.fromEntries(Object.entries(m.rowsPerSecond).map(([k, v]) => [k, round3(v)])),
    dataWaitFraction: orNull(m.dataWaitFraction),
    samplesPerSecond: orNull(m.samplesPerSecond),
    tokensPerSecond: orNull(m.tokensPerSecond),
    usage: {
      gpuHours: round3(m.gpuHours),
      nodeHours: round3(m.nodeHours),
      usdPerNodeHour: p.usdPerNodeHour,
      usd,
      plannedGpus: p.gpus,
      capacityType: p.capacityType,
      usdIsUpperBound: PRICE_OF[p.capacityType].upperBound || p.instanceTypes.length > 1,
      ...(p.instanceTypes.length > 1 ? { pricedAtDearestOf: p.instanceTypes } : {}),
    },
    forecast: forecastCheck(p, m, toSeconds - fromSeconds, usd),
    verdict: { kept: short.length === 0, line: verdictLine(p, m, short), shortfalls: short },
    timeline,
  };
}
