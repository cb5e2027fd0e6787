/** A training job's forecast (core/forecast/): its optimizer steps at the step model's time on the job's pool. */
import { trainingSteps, trainingWorkTime } from "../../../core/forecast/kinds";
import { jobForecast } from "../../../core/forecast/job";
import { scalingForecast } from "../../../core/forecast/scaling";
import type { ForecastResult, ScalingPoint } from "../../../core/forecast/types";
import type { ForecastInput } from "../api/strategy";

type TrainingForecastInput = ForecastInput<"TrainingJob"> | ForecastInput<"LoRAFineTune">;

/** The job's step at 8, 16 and 32 GPUs and its own count, over TCP and, on an EFA-capable pool, EFA. */
const jobScaling = (i: TrainingForecastInput): ScalingPoint[] =>
  scalingForecast({
    step: i.tuning.stepInput,
    globalBatchSize: i.memory.knobs.globalBatchSize,
    networkBaselineMbps: i.nodes.networkBaselineMbps,
    efaCapable: i.nodes.efaCapable,
  });

/** A training job's forecast: its optimizer steps at the time of the step its tuning planned, and how it scales. */
export function trainingForecast(i: TrainingForecastInput): ForecastResult {
  const { spec, memory } = i;
  const knobs = memory.knobs;
  const work = trainingSteps({
    rows: spec.dataset?.rows,
    epochs: spec.epochs,
    steps: spec.steps,
    globalBatchSize: knobs.globalBatchSize,
  });
  if ("unavailable" in work) return { unavailable: work.unavailable };
  const forecast = jobForecast(trainingWorkTime(work.value, i.tuning.step, memory.model), i.nodes);
  return { forecast: { ...forecast, scaling: jobScaling(i) } };
}
