/**
 * The text view of `ray-gpu report`: the verdict first, then each measured value next to its plan. Names that come
 * from Prometheus (pods, Ray Data operators) are made printable: a control character in a label is shown, not acted on.
 */
import { GIB } from "../../core/quantity";
import { printable } from "../output/terminal-text";
import { durationText } from "../../core/forecast/job";
import { priceLabel, type JobReport } from "./job-report";

const pct = (n: number | null) => (n === null ? "-" : `${n.toFixed(1)}%`);

/** Rows of `measured | planned` under their label, aligned. */
function table(rows: readonly (readonly [string, string, string])[]): string[] {
  const w = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map(([a, b, c]) => `  ${a.padEnd(w[0]!)}  ${b.padEnd(w[1]!)}  ${c}`.trimEnd());
}

/** The forecast's rows: each figure of the run, measured beside forecast, and their ratio. */
function forecastRows(r: JobReport): [string, string, string][] {
  const f = r.forecast;
  if (!f) return [["forecast", "-", "none (the spec says too little of the job's work)"]];
  const ratio = (x: number) => `, measured ${x.toFixed(2)}x`;
  return [
    [
      "time per run",
      durationText(f.measured.wallSeconds),
      `${durationText(f.forecast.wallSeconds)} forecast${ratio(f.wallRatio)}`,
    ],
    ["GPU-hours per run", f.measured.gpuHours.toFixed(2), `${f.forecast.gpuHours.toFixed(2)} forecast`],
    [
      "cost per run",
      `$${f.measured.costUsd.toFixed(2)}`,
      `$${f.forecast.costUsd.toFixed(2)} forecast${ratio(f.costRatio)}`,
    ],
    [
      "GPU utilization per run",
      pct(f.measured.gpuUtilizationPercent),
      `${pct(f.forecast.gpuUtilizationPercent)} forecast computing (DCGM also counts collectives)`,
    ],
  ];
}

/** The report as text, ending with a newline. */
export function reportText(r: JobReport): string {
  const rows: [string, string, string][] = [
    ["", "MEASURED", "PLANNED"],
    ["GPU utilization, average", pct(r.gpuUtilization.averagePercent), `${r.gpuUtilization.targetPercent}% target`],
    ["GPU utilization, p10", pct(r.gpuUtilization.p10Percent), ""],
    [
      "peak GPU memory",
      r.gpuMemory.peakGiB === null ? "-" : `${r.gpuMemory.peakGiB} GiB`,
      `${r.gpuMemory.plannedGiB} GiB of ${r.gpuMemory.usableGiB}`,
    ],
    ["bytes spilled", `${(r.spilledBytes.peak / GIB).toFixed(2)} GiB`, "0 GiB"],
    ...Object.entries(r.rayDataRowsPerSecond).map(([op, v]): [string, string, string] => [
      `rows/s ${printable(op)}`,
      v.toFixed(1),
      "",
    ]),
    ["data-wait fraction", r.dataWaitFraction === null ? "- (no telemetry)" : r.dataWaitFraction.toFixed(3), ""],
    ...(r.samplesPerSecond === null
      ? []
      : [["samples/s", r.samplesPerSecond.toFixed(1), ""] as [string, string, string]]),
    ["GPU-hours", r.usage.gpuHours.toFixed(2), `${r.usage.plannedGpus} GPUs`],
    [`cost (${priceLabel(r.usage)})`, `$${r.usage.usd.toFixed(2)}`, `$${r.usage.usdPerNodeHour.toFixed(3)}/node-hour`],
    ...forecastRows(r),
  ];
  const workers = r.gpuUtilization.perWorker.map(
    (w) => `  ${printable(w.pod)}: average ${pct(w.averagePercent)}, p10 ${pct(w.p10Percent)}`,
  );
  return [
    r.verdict.line,
    "",
    `Job ${r.job} (${r.kind}) in ${r.namespace}, ${r.window.from} to ${r.window.to}:`,
    ...table(rows),
    "",
    "GPU utilization per worker:",
    ...workers,
    "",
  ].join("\n");
}
