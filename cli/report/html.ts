/**
 * `ray-gpu report --html`: the report as one page. The verdict, the measured-versus-planned table, each worker's GPU
 * utilization over the job's lifetime against the target (SVG), and the peak GPU memory against the plan and the device.
 */
import { esc, legend, num, page, PALETTE } from "../output/html-page";
import { el, htmlTable, leaf, tableRow } from "../output/html-tags";
import { priceLabel, type JobReport, type RunFigures } from "./job-report";

const W = 1000;
const H = 260;
const PAD = { left: 44, right: 12, top: 10, bottom: 28 };

/** `t` seconds as HH:MM (UTC), for the time axis. */
const clock = (t: number) => new Date(t * 1000).toISOString().slice(11, 16);

/** The utilization timeline: one line per worker, the target dashed, 0-100% on the y axis. */
function timeline(r: JobReport): string {
  const from = Date.parse(r.window.from) / 1000;
  const to = Math.max(from + 1, Date.parse(r.window.to) / 1000);
  const x = (t: number) => PAD.left + ((t - from) / (to - from)) * (W - PAD.left - PAD.right);
  const y = (v: number) => PAD.top + (1 - v / 100) * (H - PAD.top - PAD.bottom);
  const grid = [0, 25, 50, 75, 100]
    .map(
      (v) =>
        leaf("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), stroke: "#eaeef2" }) +
        el("text", { x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end" }, `${v}%`),
    )
    .join("");
  const ticks = [0, 0.25, 0.5, 0.75, 1]
    .map((f) => from + f * (to - from))
    .map((t, i) =>
      el("text", { x: x(t), y: H - 8, "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle" }, clock(t)),
    )
    .join("");
  const lines = r.timeline.perWorker
    .map((w, i) => {
      const pts = w.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
      const stroke = PALETTE[i % PALETTE.length]!;
      return leaf("polyline", {
        class: "worker",
        "data-pod": esc(w.pod),
        fill: "none",
        stroke,
        "stroke-width": 1.5,
        points: pts,
      });
    })
    .join("");
  const target = r.gpuUtilization.targetPercent;
  const targetAt = { x1: PAD.left, x2: W - PAD.right, y1: y(target), y2: y(target) };
  const targetLine =
    leaf("line", { ...targetAt, stroke: "#cf222e", "stroke-dasharray": "6 4" }) +
    el("text", { x: W - PAD.right, y: y(target) - 4, "text-anchor": "end", fill: "#cf222e" }, `target ${target}%`);
  const box = { id: "timeline", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img" };
  return el("svg", { ...box, "aria-label": "GPU utilization per worker" }, `${grid}${ticks}${lines}${targetLine}`);
}

/** Peak GPU memory against the plan's estimate and the device's usable memory, one horizontal bar each. */
function memoryBars(r: JobReport): string {
  const { peakGiB, plannedGiB, usableGiB } = r.gpuMemory;
  const max = Math.max(usableGiB, peakGiB ?? 0, plannedGiB) * 1.05;
  const bar = (label: string, value: number, color: string, row: number) =>
    el("text", { x: 0, y: row * 30 + 16 }, esc(label)) +
    leaf("rect", { x: 150, y: row * 30 + 4, height: 18, width: ((value / max) * 780).toFixed(1), fill: color }) +
    el("text", { x: (160 + (value / max) * 780).toFixed(1), y: row * 30 + 17 }, `${value} GiB`);
  const peak = peakGiB === null ? "" : bar("peak measured", peakGiB, peakGiB > usableGiB ? "#cf222e" : "#0072B2", 1);
  const bars = `${bar("planned per GPU", plannedGiB, "#8c959f", 0)}${peak}${bar("usable per GPU", usableGiB, "#d0d7de", 2)}`;
  const box = { id: "memory", viewBox: `0 0 ${W} 96`, width: W, height: 96, role: "img" };
  return el("svg", { ...box, "aria-label": "GPU memory, planned and used" }, bars);
}

/** The forecast of one run beside what was measured, each cell keyed to its number in the JSON document. */
function forecastRows(r: JobReport): [string, string, string][] {
  if (!r.forecast) return [];
  const figure = (label: string, key: keyof RunFigures, unit: string, money = ""): [string, string, string] => [
    label,
    `${money}${num(`forecast.measured.${key}`, r.forecast!.measured[key], unit)}`,
    `${money}${num(`forecast.forecast.${key}`, r.forecast!.forecast[key], unit)} forecast`,
  ];
  return [
    figure("time per run", "wallSeconds", "s"),
    figure("GPU-hours per run", "gpuHours", ""),
    figure("cost per run", "costUsd", "", "$"),
    figure("GPU utilization (forecast: computing share)", "gpuUtilizationPercent", "%"),
  ];
}

function table(r: JobReport): string {
  const rows: [string, string, string][] = [
    [
      "GPU utilization, average",
      num("gpuUtilization.averagePercent", r.gpuUtilization.averagePercent, "%"),
      num("gpuUtilization.targetPercent", r.gpuUtilization.targetPercent, "% target"),
    ],
    ["GPU utilization, p10", num("gpuUtilization.p10Percent", r.gpuUtilization.p10Percent, "%"), ""],
    [
      "peak GPU memory",
      num("gpuMemory.peakGiB", r.gpuMemory.peakGiB, "GiB"),
      `${num("gpuMemory.plannedGiB", r.gpuMemory.plannedGiB, "GiB")} of ${num("gpuMemory.usableGiB", r.gpuMemory.usableGiB, "GiB")}`,
    ],
    [
      "bytes spilled",
      num("spilledBytes.peak", r.spilledBytes.peak, "bytes"),
      num("spilledBytes.planned", r.spilledBytes.planned, "bytes"),
    ],
    ["data-wait fraction", num("dataWaitFraction", r.dataWaitFraction), ""],
    ["GPU-hours", num("usage.gpuHours", r.usage.gpuHours), `${num("usage.plannedGpus", r.usage.plannedGpus)} GPUs`],
    [
      `cost, ${priceLabel(r.usage)}`,
      `$${num("usage.usd", r.usage.usd)}`,
      `$${num("usage.usdPerNodeHour", r.usage.usdPerNodeHour)} a node-hour`,
    ],
    ...forecastRows(r),
  ];
  const body = rows.map(([a, b, c]) => `<tr><td>${esc(a)}</td><td>${b}</td><td class="muted">${c}</td></tr>`).join("");
  return htmlTable(["", "measured", "planned"], body);
}

function workers(r: JobReport): string {
  const rows = r.gpuUtilization.perWorker
    .map((w, i) =>
      tableRow([
        esc(w.pod),
        num(`gpuUtilization.perWorker.${i}.averagePercent`, w.averagePercent, "%"),
        num(`gpuUtilization.perWorker.${i}.p10Percent`, w.p10Percent, "%"),
      ]),
    )
    .join("");
  return htmlTable(["worker", "average", "p10"], rows);
}

/** The report page. */
export function reportHtml(r: JobReport): string {
  const title = `ray-gpu report: ${r.job}`;
  const body = [
    `<h1>${esc(title)}</h1>`,
    `<div class="muted">${esc(r.kind)} in ${esc(r.namespace)}, ${esc(r.window.from)} to ${esc(r.window.to)}</div>`,
    `<div class="verdict ${r.verdict.kept ? "kept" : "short"}" data-key="verdict.line">${esc(r.verdict.line)}</div>`,
    table(r),
    `<h2>GPU utilization per worker</h2>`,
    legend(r.timeline.perWorker.map((w, i) => ({ label: w.pod, color: PALETTE[i % PALETTE.length]! }))),
    timeline(r),
    workers(r),
    `<h2>GPU memory</h2>`,
    memoryBars(r),
  ].join("\n");
  return page(title, body);
}
