// Answers the property test (calibration/test_activation_bound.py) with the planner's own numbers: one JSON request per
// line on stdin, one JSON answer per line on stdout. Reads the compiled planner (npm run build writes dist/).
import { createInterface } from "node:readline";
import process from "node:process";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { activationBytes } = require("../dist/core/memory/estimate.js");
const { logitsBytes } = require("../dist/core/memory/loss.js");

for await (const line of createInterface({ input: process.stdin })) {
  const r = JSON.parse(line);
  const activations = activationBytes(r, "cpu");
  const logits = logitsBytes(r.model, r.microBatchSize * r.tokensPerSample, "full");
  process.stdout.write(`${JSON.stringify({ activations, logits })}\n`);
}
