/**
 * DeepSpeed's estimator, reproduced to 0.01 GiB on the tables DeepSpeed and transformers print
 * (deepspeedai/DeepSpeed docs/code-docs/source/memory.rst; huggingface/transformers docs/source/en/deepspeed.md).
 * Their "GB" columns are bytes / 2**30.
 */
import { describe, expect, it } from "vitest";
import { zero2ModelStates, zero3ModelStates } from "../../../core/memory/deepspeed";
import { fullTrainingStates } from "../../../core/memory/model-states";

const gib2 = (bytes: number) => (bytes / 2 ** 30).toFixed(2);

/** The six rows of `estimate_zero3_model_states_mem_needs_all_cold`, in DeepSpeed's order. */
function zero3Table(totalParams: number, largestLayerParams: number, gpusPerNode: number): [string, string][] {
  const rows: [string, string][] = [];
  for (const [cpuOffload, cpuOffloadParams] of [
    [true, true],
    [true, false],
    [false, false],
  ] as const) {
    for (const zeroInit of [true, false]) {
      const e = zero3ModelStates({
        totalParams,
        largestLayerParams,
        gpusPerNode,
        nodes: 1,
        cpuOffload,
        cpuOffloadParams,
        zeroInit,
      });
      rows.push([gib2(e.cpuBytes), gib2(e.gpuBytes)]);
    }
  }
  return rows;
}

describe("DeepSpeed model-state estimator", () => {
  it("reproduces memory.rst's ZeRO-3 cold table for t5-3b (2851e6 params, 32e6 largest layer, 8 GPUs)", () => {
    expect(zero3Table(2851e6, 32e6, 8)).toEqual([
      ["71.69", "0.12"],
      ["127.45", "0.12"],
      ["63.72", "0.78"],
      ["127.45", "0.78"],
      ["1.43", "6.09"],
      ["127.45", "6.09"],
    ]);
  });

  it("reproduces memory.rst's ZeRO-3 live table for t5-3b (2,851,598,336 params, 32,899,072 largest layer)", () => {
    expect(zero3Table(2851598336, 32899072, 8)).toEqual([
      ["71.71", "0.12"],
      ["127.48", "0.12"],
      ["63.74", "0.79"],
      ["127.48", "0.79"],
      ["1.47", "6.10"],
      ["127.48", "6.10"],
    ]);
  });

  it("reproduces transformers' T0_3B tables (2,783,959,040 params, 65,798,144 largest layer) on 1 and 2 GPUs", () => {
    expect(zero3Table(2783959040, 65798144, 1).map(([, gpu]) => gpu)).toEqual([
      "0.25",
      "0.25",
      "5.43",
      "5.43",
      "46.91",
      "46.91",
    ]);
    expect(zero3Table(2783959040, 65798144, 1).map(([cpu]) => cpu)).toEqual([
      "70.00",
      "70.00",
      "62.23",
      "62.23",
      "0.37",
      "15.56",
    ]);
    expect(zero3Table(2783959040, 65798144, 2).map(([, gpu]) => gpu)).toEqual([
      "0.25",
      "0.25",
      "2.84",
      "2.84",
      "23.58",
      "23.58",
    ]);
  });

  it("uses ZeRO-2's current formula (2P + 18P/N); memory.rst still prints the old 4P + 16P/N", () => {
    const offload = zero2ModelStates({ totalParams: 2851e6, gpusPerNode: 8, nodes: 1, cpuOffload: true });
    const none = zero2ModelStates({ totalParams: 2851e6, gpusPerNode: 8, nodes: 1, cpuOffload: false });
    expect([gib2(offload.cpuBytes), gib2(offload.gpuBytes)]).toEqual(["127.45", "5.31"]);
    expect([gib2(none.cpuBytes), gib2(none.gpuBytes)]).toEqual(["127.45", "11.28"]);
    expect(gib2(4 * 2851e6 + (16 * 2851e6) / 8)).toBe("15.93"); // the table in the docs, from the pre-#5099 formula
  });

  it.each([
    [2, "none", 1],
    [2, "none", 8],
    [2, "optimizer", 8],
    [3, "none", 8],
    [3, "optimizer", 32],
    [3, "optimizer-and-parameters", 4],
  ] as const)(
    "splits ZeRO-%i (offload %s, %i GPUs) into weights, gradients and optimizer states that sum to DeepSpeed's figure",
    (stage, offload, gpus) => {
      const p = 8030261248;
      const ll = 525336576;
      const s = fullTrainingStates({
        parameters: p,
        largestLayerParameters: ll,
        gpus,
        gpusPerNode: Math.min(gpus, 8),
        precision: "bf16-mixed",
        optimizer: "adamw",
        zeroStage: stage,
        offload,
      });
      const nodes = Math.max(1, Math.ceil(gpus / 8));
      const ds =
        stage === 2
          ? zero2ModelStates({ totalParams: p, gpusPerNode: Math.min(gpus, 8), nodes, cpuOffload: offload !== "none" })
          : zero3ModelStates({
              totalParams: p,
              largestLayerParams: ll,
              gpusPerNode: Math.min(gpus, 8),
              nodes,
              cpuOffload: offload !== "none",
              cpuOffloadParams: offload === "optimizer-and-parameters",
            });
      expect(Math.abs(s.weights + s.gradients + s.optimizerStates - ds.gpuBytes)).toBeLessThanOrEqual(2);
      expect(s.cpuBytesPerNode).toBe(offload === "none" ? 0 : ds.cpuBytes);
    },
  );
});
