/**
 * What the forecast's calibration runs share: the tolerance, the GPUs of the published runs with their datasheet
 * figures, a run's shape and the catalog lookup. The runs are in ./published-training.ts and ./published-inference.ts.
 */
import { catalogModel } from "../../../core/models";
import type { ModelArchitecture } from "../../../core/models/types";
import type { GpuFigures } from "../../../core/forecast/types";
import { ACCELERATORS } from "../../../core/catalog/accelerators";

/** Predicted over measured must lie in this range. */
export const TOLERANCE = [0.75, 1.25] as const;

const SPECS = "winston-zhang-orz/gpu-specs@4b0c72dd data/specs.json";
/** GPUs of the published runs: dense BF16 (FP16) tensor TFLOPS and memory bandwidth, from NVIDIA's datasheets. */
export const GPUS = {
  "A100-SXM4-80GB": { denseBf16Tflops: 312, memoryBandwidthGBps: 2039, cudaTotalGiB: 79.15, source: SPECS },
  "A100-SXM4-40GB": { denseBf16Tflops: 312, memoryBandwidthGBps: 1555, cudaTotalGiB: 39.39, source: SPECS },
  L40S: { ...ACCELERATORS.L40S, source: "core/catalog/accelerators.ts" },
  L4: { ...ACCELERATORS.L4, source: "core/catalog/accelerators.ts" },
  A10G: { ...ACCELERATORS.A10G, source: "core/catalog/accelerators.ts (TFLOPS unverified)" },
} as const satisfies Record<string, GpuFigures & { cudaTotalGiB: number; source: string }>;
export type GpuName = keyof typeof GPUS;

/** One published run. */
export interface PublishedRun {
  readonly id: string;
  readonly source: string;
  readonly gpu: GpuName;
  readonly gpus: number;
  /** The settings, in words. */
  readonly setting: string;
  readonly unit: "tokens/s" | "output tokens/s" | "requests/s" | "texts/s";
  readonly measured: number;
  readonly predicted: () => number;
}

export const model = (id: string): ModelArchitecture => {
  const m = catalogModel(id);
  if (!m) throw new Error(`${id} is not in the catalog`);
  return m;
};
