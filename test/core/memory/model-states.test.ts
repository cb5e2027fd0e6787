/**
 * What a checkpoint holds per trainable parameter agrees with the memory model's own states: the weight the optimizer
 * updates (fp32 master, or bf16 in pure bf16 full training; fp32 LoRA adapters at any precision) and its optimizer
 * states, without the gradients.
 */
import { describe, expect, it } from "vitest";
import {
  checkpointBytesPerTrainable,
  fullTrainingStates,
  loraStates,
  OPTIMIZERS,
  PRECISIONS,
} from "../../../core/memory/model-states";

const P = 1_000_000;

describe("checkpointBytesPerTrainable", () => {
  it.each(OPTIMIZERS)(
    "LoRA adapters (%s) checkpoint as fp32 at every precision, as the memory model keeps them",
    (optimizer) => {
      for (const precision of PRECISIONS) {
        const s = loraStates({
          parameters: 0,
          quantizableParameters: 0,
          adapterParameters: P,
          gpus: 1,
          precision,
          optimizer,
          quantization: "none",
          zeroStage: 0,
        });
        expect(checkpointBytesPerTrainable(precision, optimizer, true) * P, precision).toBe(4 * P + s.optimizerStates);
      }
    },
  );

  it("pure bf16 full training checkpoints bf16 weights and 16-bit states, as plain DDP holds them", () => {
    const s = fullTrainingStates({
      parameters: P,
      largestLayerParameters: P,
      gpus: 1,
      gpusPerNode: 1,
      precision: "bf16-true",
      optimizer: "adamw",
      zeroStage: 0,
      offload: "none",
    });
    expect(checkpointBytesPerTrainable("bf16-true", "adamw", false) * P).toBe(s.weights + s.optimizerStates);
  });

  it("mixed precision checkpoints the fp32 master and fp32 states: 12 bytes with AdamW", () => {
    expect(checkpointBytesPerTrainable("bf16-mixed", "adamw", false)).toBe(12);
    expect(checkpointBytesPerTrainable("fp16-mixed", "adamw-8bit", false)).toBe(6);
  });
});
