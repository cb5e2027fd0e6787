/**
 * The Ray Data kinds' forecasts (core/forecast/): an embedding pipeline's rows at the pace of its GPUs or its
 * tokenizing CPUs, and batch inference's requests over its vLLM engines.
 */
import { embeddingWorkTime, inferenceWorkTime, textTokens } from "../../../core/forecast/kinds";
import { jobForecast } from "../../../core/forecast/job";
import type { ForecastResult } from "../../../core/forecast/types";
import type { DataJobTuning } from "../api/plans";
import type { ForecastInput } from "../api/strategy";

const NO_ROWS =
  "the spec does not say how many rows the job reads: set dataset.rows to forecast (the entrypoint reads its own data)";

/** An embedding pipeline's forecast: the rows it reads at the pace of its GPUs or its tokenizing CPUs. */
export function embeddingForecast(i: ForecastInput<"EmbeddingPipeline">): ForecastResult {
  const { spec, memory, tuning } = i;
  const rows = tuning.data.data.rowsToRead;
  if (rows === undefined || spec.dataset === undefined) return { unavailable: NO_ROWS };
  const time = embeddingWorkTime(
    {
      model: memory.model,
      rows,
      sequenceTokens: memory.knobs.sequenceLength,
      textTokens: Math.min(memory.knobs.sequenceLength, textTokens(spec.dataset.avgTextChars)),
      batchSize: memory.knobs.batchSize,
      gpus: spec.gpus,
      preprocessCpus: tuning.data.pool.preprocessConcurrency,
      gpu: i.node,
    },
    readFrom(rows, tuning),
  );
  return { forecast: jobForecast(time, i.nodes) };
}

/** Where a Ray Data job's row count comes from, as the plan prints it. */
function readFrom(rows: number, tuning: DataJobTuning): string {
  const fraction = tuning.data.data.sampleFraction;
  return fraction === 1 ? `dataset.rows: ${rows}` : `dataset.rows × devSampleFraction ${fraction} = ${rows}`;
}

/** A batch-inference job's forecast: every prompt times every sweep setting, over the vLLM engines. */
export function inferenceForecast(i: ForecastInput<"BatchInference">): ForecastResult {
  const { spec, memory, tuning } = i;
  const rows = tuning.data.data.rowsToRead;
  if (rows === undefined || spec.dataset === undefined) return { unavailable: NO_ROWS };
  const settings = tuning.data.sweep?.rowsPerPrompt ?? 1;
  const requests = rows * settings;
  const from = `${readFrom(rows, tuning)}${settings > 1 ? ` × ${settings} sweep settings` : ""}`;
  const time = inferenceWorkTime(
    {
      model: memory.model,
      requests,
      promptTokens: Math.min(spec.maxPromptTokens, textTokens(spec.dataset.avgTextChars)),
      outputTokens: spec.avgNewTokens ?? spec.maxNewTokens,
      tensorParallelSize: memory.knobs.tensorParallelSize,
      replicas: memory.knobs.replicas,
      kvCacheTokens: memory.kvCacheTokens,
      kvCacheBytesPerToken: memory.kvCacheBytesPerToken,
      gpu: i.node,
    },
    from,
  );
  return { forecast: jobForecast(time, i.nodes) };
}
