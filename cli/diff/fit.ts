/**
 * Why a planned workload does not fit, from the plan's own verdicts: its GPU memory estimate (`memory.fits`, the
 * verdict `plan` prints as "GPU memory: fits" or "DOES NOT FIT") and the host-memory check of
 * workloads/host-memory.ts (CPU offload must fit in the worker's heap, memory outside /dev/shm). Pure.
 */
import type { MemoryEstimate } from "../../core/memory/estimate";
import { hostMemoryFits } from "../../workloads/host-memory";

/** One memory a workload does not fit in, with what it needs and what it has. */
export interface NoFit {
  readonly memory: "GPU memory" | "host memory";
  readonly needGiB: number;
  readonly haveGiB: number;
}

/** What the verdicts read: the GPU memory estimate and the worker's heap (as the plan and its JSON both hold them). */
export interface FitInput {
  readonly memory: Pick<MemoryEstimate, "fits" | "requiredGiB" | "usableGiB" | "cpuOffloadGiBPerNode">;
  readonly worker: { readonly heapGiB: number };
}

/** Every memory the workload does not fit in, GPU memory first; empty when it fits. */
export function noFits(w: FitInput): NoFit[] {
  const m = w.memory;
  return [
    ...(m.fits ? [] : [{ memory: "GPU memory" as const, needGiB: m.requiredGiB, haveGiB: m.usableGiB }]),
    ...(hostMemoryFits(m.cpuOffloadGiBPerNode, w.worker.heapGiB)
      ? []
      : [{ memory: "host memory" as const, needGiB: m.cpuOffloadGiBPerNode, haveGiB: w.worker.heapGiB }]),
  ];
}

/** "GPU memory", "host memory" or "GPU and host memory": the memories a workload does not fit in. */
export const noFitWhere = (fits: readonly NoFit[]) =>
  fits.length === 2 ? "GPU and host memory" : (fits[0]?.memory ?? "memory");

/** Each memory's numbers, as plan words them: requires X of Y GiB per GPU; CPU offload needs X GiB per node. */
export const noFitDetail = (fits: readonly NoFit[]) =>
  fits
    .map((f) =>
      f.memory === "GPU memory"
        ? `requires ${f.needGiB} GiB of ${f.haveGiB} GiB per GPU`
        : `CPU offload needs ${f.needGiB} GiB per node but the worker has ${f.haveGiB} GiB outside /dev/shm`,
    )
    .join("; ");
