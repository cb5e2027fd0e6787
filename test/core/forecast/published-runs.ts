/**
 * The forecast's calibration table: published throughputs of runs whose settings the model reads, each with its
 * source, and the model's prediction for the same settings on the same GPU. The table in docs/forecast.md is generated
 * from these (npm run generate); test/core/forecast/published.test.ts holds each within {@link TOLERANCE}.
 *
 * Runs are kept where the stack is the one our jobs run (PyTorch eager with Hugging Face Transformers or an equivalent
 * hand-written model, PEFT, DeepSpeed; vLLM) and every setting the model reads is given or derivable. Left out, and why,
 * in docs/forecast.md ("Runs not used").
 */
import { GPUS, type PublishedRun } from "./published-common";
import { EMBEDDING_RUNS, VLLM_RUNS } from "./published-inference";
import { TRAINING_RUNS } from "./published-training";

export { TOLERANCE, type PublishedRun } from "./published-common";

/** Every run of the table. */
export const PUBLISHED_RUNS: readonly PublishedRun[] = [...TRAINING_RUNS, ...VLLM_RUNS, ...EMBEDDING_RUNS];

const GPU_SOURCES = Object.entries(GPUS).map(([name, g]) => `${name}: ${g.source}`);

/** The table of docs/forecast.md: each run, its measured and predicted throughput and their ratio. */
export function publishedForecastTable(): string {
  const rows = PUBLISHED_RUNS.map((r) => {
    const p = r.predicted();
    const ratio = (p / r.measured).toFixed(2);
    return `| ${r.id} | ${r.gpus}× ${r.gpu} | ${r.setting} | ${r.measured} ${r.unit} | ${p.toFixed(1)} | ${ratio} | ${r.source} |`;
  });
  return [
    "| run | GPUs | setting | measured | predicted | ratio | source |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `GPU figures: ${GPU_SOURCES.join("; ")}.`,
    "",
  ].join("\n");
}
