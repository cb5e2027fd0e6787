/** A training job's forecast (core/forecast/): its optimizer steps at the step model's time on the job's pool. */
import { trainingSteps, trainingWorkTime } from "../../../core/forecast/kinds";
import { jobForecast } from "../../../core/forecast/job";
import type { ForecastResult } from "../../../core/forecast/types";
import type { ForecastInput } from "../api/strategy";

/** A training job's forecast: its optimizer steps at the time of the step its tuning planned. */
export function trainingForecast(i: ForecastInput<"TrainingJob"> | ForecastInput<"LoRAFineTune">): ForecastResult {
  const { spec, memory } = i;
  const knobs = memory.knobs;
  const work = trainingSteps({
    rows: spec.dataset?.rows,
    epochs: spec.epochs,
    steps: spec.steps,
    globalBatchSize: knobs.globalBatchSize,
  });
  if ("unavailable" in work) return { unavailable: work.unavailable };
  return { forecast: jobForecast(trainingWorkTime(work.value, i.tuning.step, memory.model), i.nodes) };
}
