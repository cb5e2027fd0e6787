/**
 * The deploy simulation's placement as it was first written, kept as the reference the fast one in
 * `core/deploy/schedule.ts` is checked against (test/core/deploy/schedule-property.test.ts) and timed against
 * (bench/schedule.bench.ts): every pod filters every node and sorts the ones with room. Exact by construction, and
 * jobs x pods x nodes slow. Do not optimize it: its only job is to be obviously what the scheduler model says.
 */
import { cpuText, matches, memoryText, type NodeSlot, type Unschedulable } from "../../core/deploy/schedule";
import type { PodRequest } from "../../core/deploy/platform-pods";

const fits = (pod: PodRequest, node: NodeSlot) =>
  node.cpuMillis >= pod.cpuMillis && node.memoryMiB >= pod.memoryMiB && node.gpus >= pod.gpus;

/** Why no node takes `pod`: no node passes its filters, or none that does has room (the roomiest named). */
function whyUnschedulable(pod: PodRequest, nodes: readonly NodeSlot[]): string {
  const candidates = nodes.filter((n) => matches(pod, n));
  if (!candidates.length) {
    const selector =
      Object.entries(pod.nodeSelector)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ") || "none";
    return `no node matches its node selector (${selector}) and tolerations (${pod.tolerates.join(", ") || "none"})`;
  }
  const best = candidates.toSorted((a, b) => b.cpuMillis - a.cpuMillis || b.memoryMiB - a.memoryMiB)[0]!;
  return (
    `it requests ${cpuText(pod.cpuMillis)}, ${memoryText(pod.memoryMiB)}${pod.gpus ? `, ${pod.gpus} GPUs` : ""}; the ` +
    `roomiest node that may take it (${best.pool} node ${best.index}) has ${cpuText(best.cpuMillis)}, ` +
    `${memoryText(best.memoryMiB)}${pod.gpus ? `, ${best.gpus} GPUs` : ""} left`
  );
}

/**
 * Places `pods` in order on `nodes` (which it updates): `spread` picks the matching node with the most CPU left,
 * `firstFit` the first matching node with room. Returns the pods no node could take.
 */
export function exhaustivePlace(
  pods: readonly PodRequest[],
  nodes: NodeSlot[],
  how: "spread" | "firstFit",
): Unschedulable[] {
  const left: Unschedulable[] = [];
  for (const pod of pods) {
    const room = nodes.filter((n) => matches(pod, n) && fits(pod, n));
    const node = how === "spread" ? room.toSorted((a, b) => b.cpuMillis - a.cpuMillis)[0] : room[0];
    if (!node) {
      left.push({ pod, why: whyUnschedulable(pod, nodes) });
      continue;
    }
    node.cpuMillis -= pod.cpuMillis;
    node.memoryMiB -= pod.memoryMiB;
    node.gpus -= pod.gpus;
  }
  return left;
}
