/**
 * `ray-gpu plan --html`: the plan as one page. Each workload's GPU memory budget per GPU as a stacked bar (weights,
 * gradients, optimizer states, activations, logits, KV cache, communication buffers, framework, then the headroom up
 * to what an A10G offers), and each pool's nodes, GPUs and cost at max. Numbers carry their `plan --json` path.
 */
import { esc, legend, num, page, PALETTE } from "../output/html-page";
import { capacityCostNote } from "../../core/pools";
import type { planDocument } from "./document";

type PlanDoc = ReturnType<typeof planDocument>;

/** The parts of the budget, in stacking order, with their colors; headroom last. */
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

/**
 * One workload's two bars: its memory parts per GPU stacked (each at its own peak: they are not all held at once, so
 * they may add up to more than the plan's peak), and under them the planned requirement (the peak, the CUDA context,
 * NCCL buffers and allocator headroom) with the headroom left to what an A10G offers, or the overflow, in red.
 */
function budgetBar(w: PlanDoc["workloads"][number], i: number): string {
  const m = w.memory;
  const partsSum = PARTS.reduce((n, [key]) => n + m.breakdownGiB[key], 0);
  const max = Math.max(m.usableGiB, m.requiredGiB, partsSum) * 1.02;
  const px = (gib: number) => (gib / max) * SCALE;
  let x = 160;
  const parts = PARTS.map(([key], p) => {
    const gib = m.breakdownGiB[key];
    if (gib <= 0) return "";
    const rect = `<rect class="budget" data-part="${key}" x="${x.toFixed(1)}" y="2" width="${px(gib).toFixed(1)}" height="16" fill="${PALETTE[p % PALETTE.length]}"><title>${esc(key)} ${gib} GiB</title></rect>`;
    x += px(gib);
    return rect;
  }).join("");
  const free = m.usableGiB - m.requiredGiB;
  const required = `<rect class="required" x="160" y="22" width="${px(m.requiredGiB).toFixed(1)}" height="16" fill="${m.fits ? "#57606a" : "#cf222e"}"><title>planned ${m.requiredGiB} GiB</title></rect>`;
  const headroom =
    free > 0
      ? `<rect class="budget" data-part="headroom" x="${(160 + px(m.requiredGiB)).toFixed(1)}" y="22" width="${px(free).toFixed(1)}" height="16" fill="${HEADROOM}" stroke="#9ad0a8"/>`
      : "";
  const limitX = (160 + px(m.usableGiB)).toFixed(1);
  const limit = `<line x1="${limitX}" x2="${limitX}" y1="0" y2="40" stroke="${m.fits ? "#1b1f24" : "#cf222e"}" stroke-width="2"/>`;
  const labels = `<text x="0" y="15">${esc(w.name)}</text><text x="0" y="35" class="muted">planned / A10G</text>`;
  return `<svg class="workload-budget" id="budget-${i}" viewBox="0 0 ${W} 42" width="${W}" height="42">${labels}${parts}${required}${headroom}${limit}</svg>`;
}

function workloadRows(doc: PlanDoc): string {
  const rows = doc.workloads
    .map(
      (w, i) =>
        `<tr><td>${esc(w.name)}</td><td>${esc(w.kind)}</td><td>${num(`workloads.${i}.gpus`, w.gpus)}</td><td>${num(`workloads.${i}.memory.requiredGiB`, w.memory.requiredGiB, "GiB")}</td><td>${num(`workloads.${i}.memory.usableGiB`, w.memory.usableGiB, "GiB")}</td><td>${w.memory.fits ? "fits" : "<strong>does not fit</strong>"}</td></tr>`,
    )
    .join("");
  return `<table><tr><th>workload</th><th>kind</th><th>GPUs</th><th>planned per GPU</th><th>A10G usable</th><th></th></tr>${rows}</table>`;
}

/** Under a spot-with-fallback pool's capacity: where its nodes come from, and what it costs at most. */
const fallbackNote = (p: PlanDoc["pools"][number]) =>
  p.capacityType === "spot-with-fallback" ? `<div class="muted">${esc(capacityCostNote(p))}</div>` : "";

function poolRows(doc: PlanDoc): string {
  const rows = doc.pools
    .map(
      (p, i) =>
        `<tr><td>${esc(p.name)}</td><td>${esc(p.instanceType)}</td><td>${num(`pools.${i}.minNodes`, p.minNodes)}-${num(`pools.${i}.maxNodes`, p.maxNodes)}</td><td>${num(`pools.${i}.allocatablePerNode.gpus`, p.allocatablePerNode.gpus)}</td><td>${esc(p.capacityType)}${fallbackNote(p)}</td><td>$${num(`pools.${i}.usdPerHourAtMax`, p.usdPerHourAtMax)}</td></tr>`,
    )
    .join("");
  return `<table><tr><th>pool</th><th>instance</th><th>nodes</th><th>GPUs per node</th><th>capacity</th><th>$/h at max</th></tr>${rows}</table>`;
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
    `<div class="muted">Upper bar: each part at its own peak (they are not all held at once). Lower bar: the planned ` +
      `requirement and the headroom to the A10G's usable memory (the line).</div>`,
    parts,
    ...doc.workloads.map(budgetBar),
    workloadRows(doc),
    `<h2>Node pools</h2>`,
    poolRows(doc),
  ].join("\n");
  return page(title, body);
}
