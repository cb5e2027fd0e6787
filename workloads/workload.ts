/**
 * Workload constructs: a small typed spec in, a plan (memory, knobs, cluster shape, a reason per value) and a
 * `ray.io/v1` RayJob out. One class per kind over a shared core; the kinds differ in their memory planner and
 * in what their worker pods need.
 */
import { planClusterShape, type ClusterShapePlan } from "../core/cluster/shape";
import { RAY_SERVICE_ACCOUNT } from "../core/platform/storage";
import { resolveModel } from "../core/config/model-ref";
import { GPU_INSTANCES } from "../core/catalog/instances";
import type { GpuPoolPlan } from "../core/pools";
import {
  BatchInferenceSpecSchema, EmbeddingPipelineSpecSchema, LoRAFineTuneSpecSchema, TrainingJobSpecSchema, WorkloadSpecSchema,
  type WorkloadKind, type WorkloadSpec, type WorkloadSpecInput,
} from "../core/config/workloads";
import { joinPath, toConfigIssues } from "../core/config/zod-issues";
import { ConfigError, IssueCollector } from "../core/errors";
import type { z } from "zod";
import { resolveGpuPool, type WorkloadContext } from "./context";
import { planWorkloadMemory, type WorkloadMemoryPlan } from "./memory";
import { WORKER_NEEDS } from "./needs";
import { MANAGED_BY, renderRayJob } from "./rayjob/render";
import { tuneTraining, type TrainTuning } from "./tuning/training";
import { tuneData, type ActorPoolTuning, type DataTuning, type InferenceSweep } from "./tuning/data";
import { DEEPSPEED_FILE, TUNING_MOUNT_PATH, tuningConfigMap } from "./tuning/file";
import { runtimeConfigMap, runtimeEnvYAML, runtimeVolume } from "./tuning/runtime";
import type { Decision } from "../core/decisions";
import type { KubeObject } from "./rayjob/types";

/** A planned workload. */
export interface WorkloadPlan {
  readonly name: string;
  readonly kind: WorkloadKind;
  /** An example on placeholder data: rendered, never submitted by `pulumi up`. */
  readonly example: boolean;
  readonly environment: WorkloadContext["environment"];
  readonly nodePool: string;
  readonly instanceType: string;
  readonly gpus: number;
  /** The model as the workload named it (catalog id), or "custom". */
  readonly modelName: string;
  readonly memory: WorkloadMemoryPlan;
  readonly shape: ClusterShapePlan;
  /** Ray Train and DeepSpeed settings (training kinds), with their reasons. */
  readonly train: TrainTuning | undefined;
  /** Ray Data, actor pool and sweep settings (embedding and inference kinds). */
  readonly data: { readonly data: DataTuning; readonly pool: ActorPoolTuning; readonly sweep: InferenceSweep | undefined } | undefined;
  readonly tuningDecisions: readonly Decision[];
}

/** Shared machinery of every kind. */
export class Workload<S extends WorkloadSpec = WorkloadSpec> {
  /** The validated spec, defaults applied. */
  readonly spec: S;

  /** @throws ConfigError listing every invalid field of `spec`. */
  constructor(spec: WorkloadSpecInput | WorkloadSpec, schema: z.ZodType = WorkloadSpecSchema) {
    const result = schema.safeParse(spec);
    if (!result.success) {
      const kind = (spec as { kind?: unknown }).kind;
      throw new ConfigError(toConfigIssues(result.error, schema, spec, (p) => joinPath(p) || "(root)"), typeof kind === "string" ? kind : "workload");
    }
    this.spec = result.data as S;
  }

  /**
   * Plans the workload for a stack: pool, memory and knobs, cluster shape.
   * @throws ConfigError when the job cannot be placed on the stack's pools. A job that does not fit in GPU
   *   memory still plans, with `memory.fits` false and the ways out in `memory.advice`.
   */
  plan(ctx: WorkloadContext): WorkloadPlan {
    const path = ctx.path ?? "workload";
    const issues = new IssueCollector();
    const pool = resolveGpuPool(this.spec, ctx.pools, path, issues);
    issues.throwIfAny();
    checkBatchArithmetic(this.spec, path, issues);
    checkModelLimits(this.spec, pool!, path, issues);
    let shape: ClusterShapePlan | undefined;
    try {
      shape = planClusterShape({
        environment: ctx.environment,
        gpus: this.spec.gpus,
        gpuPool: pool!,
        headPool: ctx.pools.cpu,
        needs: WORKER_NEEDS[this.spec.kind],
        maxRuntimeMinutes: this.spec.maxRuntimeMinutes,
        path,
      });
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      issues.addAll(e.issues);
    }
    issues.throwIfAny();
    const planned = planWorkloadMemory(this.spec, pool!);
    const memory = withHostMemoryCheck(planned, shape!);
    const spec = this.spec;
    const tuned =
      spec.kind === "TrainingJob" || spec.kind === "LoRAFineTune"
        ? tuneTraining({ spec, memory, shape: shape!, environment: ctx.environment, storagePrefix: ctx.storagePrefix ?? "" })
        : undefined;
    const dataTuned =
      spec.kind === "EmbeddingPipeline" || spec.kind === "BatchInference"
        ? tuneData({
            spec,
            model: memory.model,
            knobs: memory.knobs,
            shape: shape!,
            environment: ctx.environment,
            gpusPerActor: spec.kind === "EmbeddingPipeline" ? Number(memory.knobs["gpusPerActor"]) : Number(memory.knobs["tensorParallelSize"]),
            batchSizePerActor: spec.kind === "EmbeddingPipeline" ? Number(memory.knobs["batchSize"]) : Math.max(1, Number(memory.knobs["maxConcurrentSequences"])),
          })
        : undefined;
    if (dataTuned && dataTuned.data.workingSetBytes > dataTuned.data.objectStoreLimitBytes) {
      issues.add(`${path}.gpus`, `the Ray Data working set (${dataTuned.data.workingSetBytes} B) would exceed its object-store limit (${dataTuned.data.objectStoreLimitBytes} B) and spill: use nodes with more memory`, spec.gpus);
      issues.throwIfAny();
    }
    return {
      name: this.spec.name,
      kind: this.spec.kind,
      example: this.spec.example,
      environment: ctx.environment,
      nodePool: pool!.name,
      instanceType: pool!.instanceType,
      gpus: this.spec.gpus,
      modelName: typeof this.spec.model === "string" ? this.spec.model : "custom",
      memory,
      shape: shape!,
      train: tuned?.tuning,
      data: dataTuned && { data: dataTuned.data, pool: dataTuned.pool, sweep: dataTuned.sweep },
      tuningDecisions: [...(tuned?.decisions ?? []), ...(dataTuned?.decisions ?? [])],
    };
  }

  /**
   * The Kubernetes objects this workload needs: the tuning ConfigMap, the runtime-package ConfigMap and the RayJob.
   * @throws ConfigError when `image` or `entrypoint` is missing, or the job does not fit in GPU memory.
   */
  render(ctx: WorkloadContext, plan: WorkloadPlan = this.plan(ctx)): KubeObject[] {
    const path = ctx.path ?? "workload";
    const issues = new IssueCollector();
    if (this.spec.image === undefined) issues.add(`${path}.image`, "required to render: the container image with Ray and your code");
    if (this.spec.entrypoint === undefined) issues.add(`${path}.entrypoint`, "required to render: the command the Ray job runs, e.g. python train.py");
    if (!plan.memory.fits) issues.add(`${path}.gpus`, plan.memory.advice.join("; or "), this.spec.gpus);
    issues.throwIfAny();
    const labels = { ...MANAGED_BY, "ray-gpu.io/workload": this.spec.name };
    const { deepspeed, ...train } = plan.train ?? { deepspeed: undefined };
    const configMap = tuningConfigMap({
      workload: this.spec.name,
      namespace: ctx.namespace,
      labels,
      deepspeed,
      document: {
        apiVersion: "ray-gpu.io/v1",
        kind: "Tuning",
        workload: { name: this.spec.name, kind: this.spec.kind, environment: ctx.environment, model: plan.modelName, modelFamily: plan.memory.model.family, modelType: plan.memory.model.type },
        knobs: plan.memory.knobs,
        ...(plan.train ? { train: { ...(train as Omit<TrainTuning, "deepspeed">), ...(deepspeed ? { deepspeedConfigFile: `${TUNING_MOUNT_PATH}/${DEEPSPEED_FILE}` } : {}) } } : {}),
        ...(plan.data
          ? {
              // Default output: a key prefix of the stack's bucket (RAY_GPU_STORAGE_BUCKET).
              data: { ...plan.data.data, outputUri: this.spec.outputUri ?? `${ctx.storagePrefix ?? ""}results/${this.spec.name}/` },
              actorPool: plan.data.pool,
              ...(plan.data.sweep ? { sweep: plan.data.sweep } : {}),
            }
          : {}),
        ...(this.spec.kind === "LoRAFineTune"
          ? {
              lora: {
                rank: this.spec.lora.rank,
                alpha: Number(plan.memory.knobs["loraAlpha"]),
                targetModules: this.spec.lora.targetModules,
                quantization: this.spec.lora.quantization,
                imageTokensPerSample: plan.memory.decisions.find((d) => d.key === "imageTokensPerSample")?.value as number | undefined,
              },
            }
          : {}),
      },
    });
    const size = Object.values(configMap.data).reduce((n, v) => n + Buffer.byteLength(v), 0);
    if (size > MAX_CONFIGMAP_BYTES) {
      throw new ConfigError([{ path: `${path}.sweep`, message: `the tuning ConfigMap would hold ${size} bytes, over Kubernetes' 1 MiB limit: use fewer sweep settings` }]);
    }
    const runtime = runtimeConfigMap({ workload: this.spec.name, namespace: ctx.namespace, labels });
    return [
      configMap,
      runtime,
      renderRayJob({
        name: this.spec.name,
        namespace: ctx.namespace,
        kind: this.spec.kind,
        environment: ctx.environment,
        image: this.spec.image!,
        entrypoint: this.spec.entrypoint!,
        shape: plan.shape,
        userEnv: this.spec.env,
        serviceAccountName: ctx.serviceAccountName ?? RAY_SERVICE_ACCOUNT,
        knobs: plan.memory.knobs,
        tuningConfigMap: configMap.metadata.name,
        runtimeVolume: runtimeVolume(runtime),
        runtimeEnvYAML: this.spec.runtimeEnv && runtimeEnvYAML(this.spec.runtimeEnv),
      }),
    ];
  }
}

/** Kubernetes stores a ConfigMap in one etcd value of at most 1 MiB; stay clear of it. */
const MAX_CONFIGMAP_BYTES = 1_000_000;

/** The global batch must split evenly over GPUs and micro-batches, or it cannot be kept exactly. */
function checkBatchArithmetic(spec: WorkloadSpec, path: string, issues: IssueCollector): void {
  if (spec.kind !== "TrainingJob" && spec.kind !== "LoRAFineTune") return;
  const { globalBatchSize: global, microBatchSize: micro, gpus } = spec;
  if (global === undefined) return;
  if (global % gpus !== 0) {
    issues.add(`${path}.globalBatchSize`, `must be a multiple of gpus (${gpus}) so every GPU gets the same share; use ${Math.max(gpus, Math.round(global / gpus) * gpus)}`, global);
  } else if (micro !== undefined && (global / gpus) % micro !== 0) {
    issues.add(`${path}.microBatchSize`, `must divide the per-GPU batch ${global / gpus} (globalBatchSize ${global} / ${gpus} GPUs)`, micro);
  }
}

/** Tensor parallelism must fit in a node and divide the GPUs; sequences must fit the model's context. */
function checkModelLimits(spec: WorkloadSpec, pool: GpuPoolPlan, path: string, issues: IssueCollector): void {
  const model = resolveModel(spec.model);
  const gpusPerNode = GPU_INSTANCES[pool.instanceType].gpus;
  if (spec.kind === "BatchInference" && spec.tensorParallelSize !== undefined) {
    const tp = spec.tensorParallelSize;
    if (tp > gpusPerNode) issues.add(`${path}.tensorParallelSize`, `must be at most ${gpusPerNode}, the GPUs of one ${pool.instanceType} node (tensor parallelism stays inside a node)`, tp);
    else if (spec.gpus % tp !== 0) issues.add(`${path}.tensorParallelSize`, `must divide gpus (${spec.gpus}) so every replica gets ${tp} GPUs`, tp);
  }
  const context = model.maxSequenceLength ?? model.maxPositionEmbeddings;
  const seq = spec.kind === "BatchInference" ? spec.maxPromptTokens + spec.maxNewTokens : spec.sequenceLength;
  if (seq !== undefined && context !== undefined && seq > context) {
    const field = spec.kind === "BatchInference" ? "maxPromptTokens" : "sequenceLength";
    issues.add(`${path}.${field}`, `${seq} tokens exceed the model's context of ${context} tokens`, spec.kind === "BatchInference" ? spec.maxPromptTokens : seq);
  }
}

/** CPU offload must fit in the worker pod's heap (memory outside /dev/shm), or the node swaps and dies. */
function withHostMemoryCheck(m: WorkloadMemoryPlan, shape: ClusterShapePlan): WorkloadMemoryPlan {
  const need = m.memory.cpuOffloadGiBPerNode;
  if (need === 0 || need <= shape.worker.heapGiB) return m;
  return {
    ...m,
    fits: false,
    advice: [...m.advice, `offloading needs ${need} GiB of host memory per node (DeepSpeed's estimate) but the worker has ${shape.worker.heapGiB} GiB outside /dev/shm: use more GPUs, or g5.48xlarge (more RAM per GPU)`],
  };
}

type SpecOf<K extends WorkloadKind> = Extract<WorkloadSpec, { kind: K }>;
type InputOf<K extends WorkloadKind> = Extract<WorkloadSpecInput, { kind: K }>;

/** Multi-node data-parallel training (DDP or DeepSpeed ZeRO) with Ray Train. */
export class TrainingJob extends Workload<SpecOf<"TrainingJob">> {
  constructor(spec: InputOf<"TrainingJob">) {
    super(spec, TrainingJobSpecSchema);
  }
}

/** Supervised fine-tuning with LoRA or QLoRA, text or vision-language. */
export class LoRAFineTune extends Workload<SpecOf<"LoRAFineTune">> {
  constructor(spec: InputOf<"LoRAFineTune">) {
    super(spec, LoRAFineTuneSpecSchema);
  }
}

/** Ray Data batch embeddings with an encoder. */
export class EmbeddingPipeline extends Workload<SpecOf<"EmbeddingPipeline">> {
  constructor(spec: InputOf<"EmbeddingPipeline">) {
    super(spec, EmbeddingPipelineSpecSchema);
  }
}

/** Offline LLM inference over a dataset. */
export class BatchInference extends Workload<SpecOf<"BatchInference">> {
  constructor(spec: InputOf<"BatchInference">) {
    super(spec, BatchInferenceSpecSchema);
  }
}
