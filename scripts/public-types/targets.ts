/**
 * Which plain types are generated from which zod schemas, into which file. `side` is zod's: "output" is the value
 * after validation with defaults applied, "input" the value as written. A nested type that is one of these is printed
 * by its name (the same side first), so a new schema worth naming in the API is one row here.
 */

/** One generated type. */
export interface PublicType {
  /** The exported name. */
  readonly name: string;
  /** The schema's module, from the repository root, without extension. */
  readonly module: string;
  /** The schema: an exported name of `module`, or a property path under one (`TuningDocumentSchema.shape.workload`). */
  readonly schema: string;
  readonly side: "output" | "input";
  /** The type's JSDoc. */
  readonly doc: string;
}

/** One generated file. */
export interface PublicTypesFile {
  /** From the repository root. */
  readonly path: string;
  /** The file's first JSDoc line. */
  readonly about: string;
  readonly types: readonly PublicType[];
}

const PLATFORM = "core/config/platform";
const WORKLOADS = "core/config/workloads";
const CONTRACT = "workloads/contract/document";

/** Both sides of a schema: `name` validated with defaults applied, `${name}Input` as written. */
function bothSides(name: string, module: string, schema: string, what: string): PublicType[] {
  return [
    { name, module, schema, side: "output", doc: `${what}, validated, defaults applied.` },
    { name: `${name}Input`, module, schema, side: "input", doc: `${what} as written, before validation and defaults.` },
  ];
}

const CONFIG_TYPES: readonly PublicType[] = [
  ...bothSides("StackConfig", "core/config/stack", "StackConfigSchema", "The keys under `ray-gpu:` of a stack"),
  ...bothSides("PlatformConfig", PLATFORM, "PlatformSchema", "Everything under `ray-gpu:platform`"),
  ...bothSides(
    "ClusterConfig",
    PLATFORM,
    "ClusterSchema",
    "The EKS cluster: `{ mode: create, ... }` or `{ mode: existing }`",
  ),
  ...bothSides("NetworkConfig", PLATFORM, "NetworkSchema", "The VPC of a new cluster"),
  ...bothSides("CpuNodeGroupConfig", PLATFORM, "CpuNodeGroupSchema", "The CPU pool for Ray heads and system pods"),
  ...bothSides("GpuNodeGroupConfig", PLATFORM, "GpuNodeGroupSchema", "One A10G (g5) pool"),
  ...bothSides("DaemonSetReserveConfig", PLATFORM, "DaemonSetReserveSchema", "What DaemonSets take from each node"),
  ...bothSides("StorageConfig", PLATFORM, "StorageSchema", "The S3 bucket (and optional FSx for Lustre)"),
  ...bothSides("SecurityConfig", PLATFORM, "SecuritySchema", "What Ray pods may reach"),
  ...bothSides("QueueingConfig", PLATFORM, "QueueingSchema", "Job queueing (Kueue)"),
  ...bothSides(
    "ObservabilityConfig",
    "core/config/observability",
    "ObservabilitySchema",
    "GPU and Ray metrics, alerts and dashboards",
  ),
  ...bothSides("ModelRef", "core/config/model-ref", "ModelRefSchema", "A model: a catalog name or an architecture"),
  ...bothSides(
    "CustomModelArchitecture",
    "core/config/model-ref",
    "ModelArchitectureSchema",
    "A model outside the catalog, by its architecture",
  ),
  ...bothSides(
    "SecretEnvSource",
    "core/config/secrets",
    "SecretEnvSourceSchema",
    "Where a secret variable's value comes from",
  ),
  ...bothSides("DatasetConfig", WORKLOADS, "DatasetSchema", "Where a workload reads its data, and how much there is"),
  ...bothSides("LoraConfig", WORKLOADS, "LoraSchema", "LoRA / QLoRA adapter settings"),
  ...bothSides("ImagesConfig", WORKLOADS, "ImagesSchema", "Images per sample for vision-language fine-tuning"),
  ...bothSides("TrainingJobSpec", WORKLOADS, "TrainingJobSpecSchema", "A `TrainingJob` spec"),
  ...bothSides("LoRAFineTuneSpec", WORKLOADS, "LoRAFineTuneSpecSchema", "A `LoRAFineTune` spec"),
  ...bothSides("EmbeddingPipelineSpec", WORKLOADS, "EmbeddingPipelineSpecSchema", "An `EmbeddingPipeline` spec"),
  ...bothSides("BatchInferenceSpec", WORKLOADS, "BatchInferenceSpecSchema", "A `BatchInference` spec"),
  ...bothSides("WorkloadSpec", WORKLOADS, "WorkloadSpecSchema", "A workload spec of any kind"),
];

/** A contract type: the document is only written by us, so only the output side. */
function contract(name: string, schema: string, doc: string): PublicType {
  return { name, module: CONTRACT, schema, side: "output", doc };
}

const CONTRACT_TYPES: readonly PublicType[] = [
  contract(
    "TuningDocument",
    "TuningDocumentSchema",
    "The tuning document every RayJob mounts at `/etc/ray-gpu/tuning.json` (contract v1).",
  ),
  contract("TuningWorkload", "TuningDocumentSchema.shape.workload", "The workload a tuning document is for."),
  contract("TrainingJobKnobs", "TrainingJobKnobsSchema", "Knobs of a training job: the memory planner's choices."),
  contract("LoRAKnobs", "LoRAKnobsSchema", "Knobs of a LoRA fine-tune: the training knobs and the adapter's."),
  contract("EmbeddingKnobs", "EmbeddingKnobsSchema", "Knobs of an embedding pipeline."),
  contract("InferenceKnobs", "InferenceKnobsSchema", "Knobs of batch LLM inference."),
  contract("TrainSection", "TrainSectionSchema", "Ray Train settings (training kinds)."),
  contract("DataSection", "DataSectionSchema", "Ray Data settings (embedding and inference kinds)."),
  contract("ActorPoolSection", "ActorPoolSectionSchema", "The GPU actor pool of a Ray Data job."),
  contract("SweepSection", "SweepSectionSchema", "A generation-parameter sweep (batch inference)."),
  contract("LoraSection", "LoraSectionSchema", "Adapter settings (LoRA fine-tuning)."),
];

/** A run record type: written by the runtime, read by `ray-gpu tune`, so only the output side. */
function record(name: string, schema: string, doc: string): PublicType {
  return { name, module: "core/tune/run-record", schema, side: "output", doc };
}

const RUN_RECORD_TYPES: readonly PublicType[] = [
  record(
    "RunRecord",
    "RunRecordSchema",
    "What one run of a workload measured (`ray-gpu tune` reads it; run record v1).",
  ),
  record("OperatorRecord", "OperatorRecordSchema", "One Ray Data operator of a run record."),
];

export const PUBLIC_TYPE_FILES: readonly PublicTypesFile[] = [
  {
    path: "core/config/types.ts",
    about: "The stack configuration and the workload specs as plain TypeScript types.",
    types: CONFIG_TYPES,
  },
  {
    path: "workloads/contract/types.ts",
    about: "The runtime contract's tuning document as plain TypeScript types.",
    types: CONTRACT_TYPES,
  },
  {
    path: "core/tune/types.ts",
    about: "The run record as plain TypeScript types.",
    types: RUN_RECORD_TYPES,
  },
];
