/**
 * `pulumi-ray-gpu/workloads`: the workload constructs, which turn a small typed spec into a tuned KubeRay RayJob and
 * the ConfigMaps it mounts; stack planning; the runtime contract's document. Pure: no Pulumi imports.
 */
export {
  BatchInference,
  EmbeddingPipeline,
  LoRAFineTune,
  TrainingJob,
  Workload,
  type WorkloadPlan,
  type WorkloadPlanOf,
} from "./workload";
export type { WorkloadContext } from "./context";
export { planStack, type NotRendered, type PlanStackOptions, type StackPlan } from "./stack";
export type { RuntimePackage } from "./contract/configmaps";
export type { KnobsByKind, KnobsOf, SectionTypes, SectionsOf, TuningDocumentOf } from "./contract/document";
export type {
  ActorPoolSection,
  DataSection,
  EmbeddingKnobs,
  InferenceKnobs,
  LoRAKnobs,
  LoraSection,
  SweepSection,
  TrainingJobKnobs,
  TrainSection,
  TuningDocument,
  TuningWorkload,
} from "./contract/types";
export type { ConfigMap, KubeObject, RayJob } from "./k8s/types";
export { checkRayJob } from "./rayjob/checks";
