/**
 * The runtime contract: every RayJob mounts a ConfigMap at `/etc/ray-gpu` holding `tuning.json` (and
 * `deepspeed.json` when ZeRO is used), and sets `RAY_GPU_TUNING_FILE` to the file. The document is versioned
 * (`apiVersion: ray-gpu.io/v1`, `kind: Tuning`) so user code and the runtime library can rely on its keys.
 */
import type { ConfigMap } from "../rayjob/types";
import { stableJson } from "../../core/serialize";
import type { TrainTuning } from "./training";
import type { ActorPoolTuning, DataTuning, InferenceSweep } from "./data";

export const TUNING_MOUNT_PATH = "/etc/ray-gpu";
export const TUNING_FILE = "tuning.json";
export const DEEPSPEED_FILE = "deepspeed.json";
/** Platform ConfigMap (created by `Storage`) with the bucket the job's outputs go to. */
export const STORAGE_CONFIGMAP = "ray-gpu-storage";

/** The tuning document, version 1. */
export interface TuningDocument {
  readonly apiVersion: "ray-gpu.io/v1";
  readonly kind: "Tuning";
  readonly workload: {
    readonly name: string;
    readonly kind: string;
    readonly environment: string;
    readonly model: string;
    /** Catalog family (`llama-3.1`, `qwen2-vl`, `bge-v1.5`, ...) and architecture type of the model. */
    readonly modelFamily: string;
    readonly modelType: string;
  };
  /** The memory planner's knobs, the same values as the `RAY_GPU_*` variables. */
  readonly knobs: Readonly<Record<string, string | number | boolean>>;
  /** Ray Train settings (training kinds only). */
  readonly train?: Omit<TrainTuning, "deepspeed"> & { readonly deepspeedConfigFile?: string };
  /** Ray Data settings (embedding and inference kinds). */
  readonly data?: DataTuning & { readonly outputUri: string | undefined };
  readonly actorPool?: ActorPoolTuning;
  /** Generation-parameter sweep (batch inference). */
  readonly sweep?: InferenceSweep;
  /** Adapter settings (LoRA fine-tuning). */
  readonly lora?: { readonly rank: number; readonly alpha: number; readonly targetModules: readonly string[]; readonly quantization: string; readonly imageTokensPerSample: number | undefined };
}

/** Name of a workload's tuning ConfigMap. */
export const tuningConfigMapName = (workload: string) => `${workload}-tuning`;

/** The ConfigMap holding the tuning document (and DeepSpeed config). */
export function tuningConfigMap(args: { workload: string; namespace: string; labels: Readonly<Record<string, string>>; document: TuningDocument; deepspeed?: Readonly<Record<string, unknown>> }): ConfigMap {
  const data: Record<string, string> = { [TUNING_FILE]: stableJson(args.document) };
  if (args.deepspeed) data[DEEPSPEED_FILE] = stableJson(args.deepspeed);
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name: tuningConfigMapName(args.workload), namespace: args.namespace, labels: { ...args.labels } }, data };
}
