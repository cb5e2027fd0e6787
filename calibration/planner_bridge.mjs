// Answers the property test (calibration/test_activation_bound.py) with the planner's own numbers: one JSON request per
// line on stdin, one JSON answer per line on stdout. Reads the compiled planner (npm run build writes dist/).
import { createInterface } from "node:readline";
import process from "node:process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { activationBytes } = require("../dist/core/memory/estimate.js");
const { logitsBytes } = require("../dist/core/memory/loss.js");
const { adapterParameters } = require("../dist/core/memory/lora.js");
const { autocastCopyBytes } = require("../dist/core/memory/model-states.js");
const { cudaAutocastOf, loraActivation } = require("../dist/core/memory/knob-search.js");

for await (const line of createInterface({ input: process.stdin })) {
  const r = JSON.parse(line);
  // What the knob search hands activationBytes: the adapters compute in 16 bit under mixed precision, a QLoRA stream
  // runs in fp32 where PEFT's upcast is kept, and mixed precision on plain DDP runs under CUDA's autocast.
  const lora = r.lora && loraActivation(r.lora, r.precision, r.lora.unquantizedPrecision);
  const cudaAutocast = cudaAutocastOf(r.precision, r.zeroStage);
  const activations = activationBytes({ ...r, lora, cudaAutocast }, "cpu");
  const logits = logitsBytes(r.model, r.microBatchSize * r.tokensPerSample, "full");
  // Autocast's 16-bit copies of the trainable weights (the adapters, or every weight in full training) are saved for
  // backward too; the plan counts them with the weights.
  const trainable = lora ? adapterParameters(r.model, lora.rank, lora.targetModules) : r.trainableParameters;
  const weightCopies = autocastCopyBytes(r.precision, trainable);
  process.stdout.write(`${JSON.stringify({ activations, logits, weightCopies })}\n`);
}
