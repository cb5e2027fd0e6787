/** LoRAFineTune: supervised fine-tuning with LoRA or QLoRA adapters, text or vision-language, with Ray Train. */
import { defaultLoraTargets } from "../../../core/memory/lora";
import { unquantizedOf } from "../../../core/memory/knob-search";
import { LoRAFineTuneSpecSchema } from "../../../core/config/workloads";
import type { LoRAKnobs } from "../../contract/document";
import { checkBatchArithmetic, checkTrainingSpec } from "../ray-train/checks";
import { planTrainingKindMemory } from "../ray-train/memory";
import { TRAINING_NEEDS } from "../ray-train/needs";
import { trainSection, tuneTraining } from "../ray-train/tune";
import type { KindStrategy } from "../api/strategy";
import { trainingForecast } from "../ray-train/forecast";

export const LORA_FINE_TUNE: KindStrategy<"LoRAFineTune"> = {
  schema: LoRAFineTuneSpecSchema,
  rayResource: "RayJob",
  needs: TRAINING_NEEDS,
  check: (spec, _pool, path, issues) => checkTrainingSpec(spec, path, issues),
  checkGpus: (spec, _pool, path, issues) => checkBatchArithmetic(spec, path, issues),
  planMemory(spec, pool) {
    const plan = planTrainingKindMemory(spec, pool);
    const { rank, alpha, quantization } = spec.lora;
    const knobs: LoRAKnobs = {
      ...plan.knobs,
      loraRank: rank,
      loraAlpha: alpha ?? 2 * rank,
      loraQuantization: quantization,
    };
    return { ...plan, knobs };
  },
  tune: (input) => tuneTraining({ ...input, knobs: input.memory.knobs }),
  forecast: trainingForecast,
  document({ spec, memory, tuning }) {
    const { train, files } = trainSection(tuning);
    const { rank, targetModules, quantization, dropout } = spec.lora;
    const lora = {
      rank,
      alpha: memory.knobs.loraAlpha,
      targetModules: [...(targetModules ?? defaultLoraTargets(memory.model))],
      quantization,
      dropout,
      unquantizedPrecision: unquantizedOf(spec, memory.knobs),
      imageTokensPerSample: memory.imageTokensPerSample,
    };
    return { sections: { train, lora }, files };
  },
};
