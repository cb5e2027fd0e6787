/**
 * `ray-gpu plan --html`: the plan as one page. Each workload's GPU memory budget per GPU as bars on one scale (weights,
 * gradients, optimizer states, activations, logits, KV cache, communication buffers, framework, each at its own peak;
 * then the planned requirement and the headroom up to what the GPU offers), and each pool's nodes, GPUs and cost at
 * max, and each workload's forecast of one run (time, cost, GPU utilization). Numbers carry their `plan --json` path.
 */
import { GPU_INSTANCES } from "../../core/catalog/instances";
import { esc, legend, num, page, PALETTE } from "../output/html-page";
import { el, htmlTable, leaf, tableRow } from "../output/html-tags";
import { capacityCostNote } from "../../core/pools";
import type { planDocument } from "./document";

type PlanDoc = ReturnType<typeof planDocument>;

/** The parts of the budget, in drawing order, with their colors; headroom last. */
const PARTS = [
  ["weights", "weights"],
  ["gradients", "gradients"],
  ["optimizerStates", "optimizer states"],
  ["activations", "activations"],
  ["logits", "logits"],
  ["kvCache", "KV cache"],
  ["communicationBuffers", "communication buffers"],
  ["framework", "framework"],
] as const;
const HEADROOM = "#e6f4ea";

const W = 960;
const SCALE = 780;

/** Height of one part's bar, and the step from one to the next. */
const PART_PX = 6;
const PART_STEP_PX = 8;
/** Where the bars start, right of the labels. */
const X0 = 160;

/**
 * One workload's bars, all on one scale and from one zero, so the line (the usable memory per GPU) cuts them where it
 * would cut the GPU: each memory part at its own peak, one bar each (they are not all held at once, so stacked they
 * would add up to more than the plan's peak and cross the line of a job that fits), and under them the planned
 * requirement (the peak, the CUDA context, NCCL buffers and allocator headroom) with the headroom left to what the GPU
 * offers, or the overflow, in red.
 */
/** The GPU a workload's memory is planned against: its pool's, or the one that binds among the pool's types. */
const gpuOf = (w: PlanDoc["workloads"][number]) =>
  GPU_INSTANCES[w.fallback?.gpuMemoryBindsOn ?? w.instanceType].accelerator;

function budgetBar(w: PlanDoc["workloads"][number], i: number): string {
  const m = w.memory;
  const shown = PARTS.map(([key], p) => ({ key, p, gib: m.breakdownGiB[key] })).filter((part) => part.gib > 0);
  const max = Math.max(m.usableGiB, m.requiredGiB, ...shown.map((part) => part.gib)) * 1.02;
  const px = (gib: number) => (gib / max) * SCALE;
  const parts = shown
    .map(({ key, p, gib }, row) => {
      const at = { x: X0, y: 2 + row * PART_STEP_PX, width: px(gib).toFixed(1), height: PART_PX };
      const bar = { class: "budget", "data-part": key, ...at, fill: PALETTE[p % PALETTE.length]! };
      return el("rect", bar, el("title", {}, `${esc(key)} ${gib} GiB`));
    })
    .join("");
  const y = 2 + shown.length * PART_STEP_PX + 4;
  const height = y + 20;
  const free = m.usableGiB - m.requiredGiB;
  const requiredAt = { x: X0, y, width: px(m.requiredGiB).toFixed(1), height: 16 };
  const required = el(
    "rect",
    { class: "required", ...requiredAt, fill: m.fits ? "#57606a" : "#cf222e" },
    el("title", {}, `planned ${m.requiredGiB} GiB`),
  );
  const freeAt = { x: (X0 + px(m.requiredGiB)).toFixed(1), y, width: px(free).toFixed(1), height: 16 };
  const headroom =
    free > 0
      ? leaf("rect", { class: "budget", "data-part": "headroom", ...freeAt, fill: HEADROOM, stroke: "#9ad0a8" })
      : "";
  const limitX = (X0 + px(m.usableGiB)).toFixed(1);
  const stroke = m.fits ? "#1b1f24" : "#cf222e";
  const limit = leaf("line", { class: "usable", x1: limitX, x2: limitX, y1: 0, y2: height, stroke, "stroke-width": 2 });
  const gpu = `planned / ${gpuOf(w)}`;
  const labels = `${el("text", { x: 0, y: 12 }, esc(w.name))}${el("text", { x: 0, y: y + 13, class: "muted" }, gpu)}`;
  const box = { class: "workload-budget", id: `budget-${i}`, viewBox: `0 0 ${W} ${height}`, width: W, height };
  return el("svg", box, `${labels}${parts}${required}${headroom}${limit}`);
}

/** A workload's forecast cells: time and cost of one run, and its GPU utilization; "-" where there is no forecast. */
function forecastCells(w: PlanDoc["workloads"][number], i: number): string[] {
  const f = w.forecast;
  if (!f) return ["-", "-", "-"];
  const at = `workloads.${i}.forecast`;
  const upTo = f.costIsUpperBound ? "at most " : "";
  return [
    num(`${at}.wallSeconds`, f.wallSeconds, "s"),
    `${upTo}$${num(`${at}.costUsd`, f.costUsd)}`,
    num(`${at}.gpuUtilization`, f.gpuUtilization),
  ];
}

function workloadRows(doc: PlanDoc): string {
  const rows = doc.workloads
    .map((w, i) =>
      tableRow([
        esc(w.name),
        esc(w.kind),
        num(`workloads.${i}.gpus`, w.gpus),
        num(`workloads.${i}.memory.requiredGiB`, w.memory.requiredGiB, "GiB"),
        num(`workloads.${i}.memory.usableGiB`, w.memory.usableGiB, "GiB"),
        w.memory.fits ? "fits" : "<strong>does not fit</strong>",
        ...forecastCells(w, i),
      ]),
    )
    .join("");
  const forecast = ["time per run", "cost per run", "GPU utilization (forecast)"];
  return htmlTable(["workload", "kind", "GPUs", "planned per GPU", "usable per GPU", "verdict", ...forecast], rows);
}

/** Under a spot-with-fallback pool's capacity: where its nodes come from, and what it costs at most. */
const fallbackNote = (p: PlanDoc["pools"][number]) =>
  p.capacityType === "spot-with-fallback" ? `<div class="muted">${esc(capacityCostNote(p))}</div>` : "";

function poolRows(doc: PlanDoc): string {
  const rows = doc.pools
    .map((p, i) =>
      tableRow([
        esc(p.name),
        esc(p.instanceType),
        `${num(`pools.${i}.minNodes`, p.minNodes)}-${num(`pools.${i}.maxNodes`, p.maxNodes)}`,
        num(`pools.${i}.allocatablePerNode.gpus`, p.allocatablePerNode.gpus),
        `${esc(p.capacityType)}${fallbackNote(p)}`,
        `$${num(`pools.${i}.usdPerHourAtMax`, p.usdPerHourAtMax)}`,
      ]),
    )
    .join("");
  return htmlTable(["pool", "instance", "nodes", "GPUs per node", "capacity", "$/h at max"], rows);
}

/** The plan page of a stack (or of one workload file). */
export function planHtml(doc: PlanDoc): string {
  const title = `ray-gpu plan: ${doc.stack ?? "workload"} (${doc.environment})`;
  const parts = legend([
    ...PARTS.map(([, label], p) => ({ label, color: PALETTE[p % PALETTE.length]! })),
    { label: "headroom", color: HEADROOM },
  ]);
  const body = [
    `<h1>${esc(title)}</h1>`,
    `<div class="muted">${esc(doc.region)}, namespace ${esc(doc.namespace)}</div>`,
    `<h2>GPU memory per GPU</h2>`,
    `<div class="muted">Thin bars: each part at its own peak, one bar each from the same zero (they are not all held ` +
      `at once, so they are not stacked). Thick bar: the planned requirement and the headroom to the GPU's usable ` +
      `memory (the line).</div>`,
    parts,
    ...doc.workloads.map(budgetBar),
    workloadRows(doc),
    `<h2>Node pools</h2>`,
    poolRows(doc),
  ].join("\n");
  return page(title, body);
}
