/**
 * A workload kind as one typed strategy: its spec schema, what its worker pods need, the rules that need the pool, its
 * memory plan (typed knobs), its tuning (Ray Train or Ray Data) and its sections of the tuning document. The table in
 * `table.ts` maps every kind to its strategy; `Workload` runs the same short pipeline for all of them.
 */
import type { z } from "zod";
import type { ClusterShapePlan, WorkerNeeds } from "../../../core/cluster/shape";
import type { Environment } from "../../../core/config/stack";
import type { WorkloadKind, WorkloadSpec, WorkloadSpecInput } from "../../../core/config/workloads";
import type { IssueCollector } from "../../../core/errors";
import type { JobNodes } from "../../../core/forecast/job";
import type { ForecastResult } from "../../../core/forecast/types";
import type { GpuPoolPlan, PoolNode } from "../../../core/pools";
import type { KnobsOf, SectionsOf } from "../../contract/document";
import type { RayResourceKind } from "../../resources/api";
import type { DataJobTuning, InferenceMemoryPlan, KindMemoryPlan, LoRAMemoryPlan, TrainingTuning } from "./plans";

export type SpecOf<K extends WorkloadKind> = Extract<WorkloadSpec, { kind: K }>;
export type InputOf<K extends WorkloadKind> = Extract<WorkloadSpecInput, { kind: K }>;

/** What each kind plans, by kind. */
export interface KindPlans {
  readonly TrainingJob: { readonly memory: KindMemoryPlan<KnobsOf<"TrainingJob">>; readonly tuning: TrainingTuning };
  readonly LoRAFineTune: { readonly memory: LoRAMemoryPlan; readonly tuning: TrainingTuning };
  readonly EmbeddingPipeline: {
    readonly memory: KindMemoryPlan<KnobsOf<"EmbeddingPipeline">>;
    readonly tuning: DataJobTuning;
  };
  readonly BatchInference: { readonly memory: InferenceMemoryPlan; readonly tuning: DataJobTuning };
}
export type MemoryPlanOf<K extends WorkloadKind> = KindPlans[K]["memory"];
export type TuningOf<K extends WorkloadKind> = KindPlans[K]["tuning"];

/** What a kind's tuner reads. */
export interface TuneInput<K extends WorkloadKind> {
  readonly spec: SpecOf<K>;
  readonly memory: MemoryPlanOf<K>;
  readonly shape: ClusterShapePlan;
  /** What every node of the job's GPU pool offers (its network carries checkpoints; its GPUs set the step time). */
  readonly node: PoolNode;
  readonly environment: Environment;
  /** Key prefix of the stack's bucket. */
  readonly storagePrefix: string;
  /** Config path of the workload, for error messages. */
  readonly path: string;
}

/** What a kind's forecast reads: its tuning input, its tuning and the job's GPU nodes with their price. */
export type ForecastInput<K extends WorkloadKind> = TuneInput<K> & {
  readonly tuning: TuningOf<K>;
  readonly nodes: JobNodes;
};

/** A kind's part of the tuning document, and files that go beside it (the DeepSpeed config). */
export interface KindDocument<K extends WorkloadKind> {
  readonly sections: SectionsOf<K>;
  readonly files: Readonly<Record<string, object>>;
}

export interface KindStrategy<K extends WorkloadKind> {
  /**
   * Validates and defaults a spec of the kind.
   * @internal
   */
  readonly schema: z.ZodType<SpecOf<K>, InputOf<K>>;
  /** The Ray resource the kind renders to (`workloads/ray-resources.ts`): a RayJob for every batch kind. */
  readonly rayResource: RayResourceKind;
  /** What the kind needs from its worker pods, with the reasons. */
  readonly needs: WorkerNeeds;
  /** Rules that need the pool or the model: batch arithmetic, tensor parallelism, context length. */
  check(spec: SpecOf<K>, pool: GpuPoolPlan, path: string, issues: IssueCollector): void;
  /**
   * Rules computed from `gpus` (the global batch splits over them, tensor parallelism divides them). Run only once the
   * cluster shape accepts the count: a hint computed from a refused count would no longer hold after its fix.
   * @default - none
   */
  checkGpus?(spec: SpecOf<K>, pool: GpuPoolPlan, path: string, issues: IssueCollector): void;
  /** Memory and knobs for one GPU of `pool`. */
  planMemory(spec: SpecOf<K>, pool: GpuPoolPlan): MemoryPlanOf<K>;
  /** Ray Train or Ray Data settings, from the memory plan and the cluster shape. */
  tune(input: TuneInput<K>): TuningOf<K>;
  /** Time and cost to finish (core/forecast/), or why the spec does not say enough to forecast them. */
  forecast(input: ForecastInput<K>): ForecastResult;
  /** The kind's sections of the tuning document. */
  document(input: TuneInput<K> & { readonly tuning: TuningOf<K> }): KindDocument<K>;
}
