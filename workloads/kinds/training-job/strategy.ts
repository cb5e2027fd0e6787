/** TrainingJob: multi-node data-parallel training (DDP or DeepSpeed ZeRO) with Ray Train. */
import { TrainingJobSpecSchema } from "../../../core/config/workloads";
import { checkBatchArithmetic, checkTrainingSpec } from "../ray-train/checks";
import { planTrainingKindMemory } from "../ray-train/memory";
import { TRAINING_NEEDS } from "../ray-train/needs";
import { trainSection, tuneTraining } from "../ray-train/tune";
import type { KindStrategy } from "../api/strategy";
import { trainingForecast } from "../ray-train/forecast";

export const TRAINING_JOB: KindStrategy<"TrainingJob"> = {
  schema: TrainingJobSpecSchema,
  rayResource: "RayJob",
  needs: TRAINING_NEEDS,
  check: (spec, _pool, path, issues) => checkTrainingSpec(spec, path, issues),
  checkGpus: (spec, _pool, path, issues) => checkBatchArithmetic(spec, path, issues),
  planMemory: (spec, pool) => planTrainingKindMemory(spec, pool),
  tune: (input) => tuneTraining({ ...input, knobs: input.memory.knobs }),
  forecast: trainingForecast,
  document({ tuning }) {
    const { train, files } = trainSection(tuning);
    return { sections: { train }, files };
  },
};
