/**
 * Workload constructs: a small typed spec in, a plan (memory and knobs, cluster shape, tuning, a reason per value) and
 * a `ray.io/v1` RayJob out. `plan` and `render` are short pipelines shared by every kind; what differs per kind lives
 * in its strategy (`kinds/table.ts`).
 */
import { DEFAULT_GPU_UTILIZATION_TARGET } from "../core/observability/rules";
import { jobAlertInput, type JobAlertFacts } from "./observability/job-alerts";
import type { DataJobTuning, TrainingTuning } from "./kinds/api/plans";
import { jobPrometheusRule } from "./observability/monitoring";
import { resolveSecretEnv } from "./security/secrets";
import { adviceText } from "../core/memory/advice-text";
import { planClusterShape, type ClusterShapePlan } from "../core/cluster/shape";
import type { Environment } from "../core/config/stack";
import { WorkloadSpecSchema, type WorkloadKind, type WorkloadSpec } from "../core/config/workloads";
import { joinPath, toConfigIssues } from "../core/config/zod-issues";
import { ConfigError, IssueCollector, showValue } from "../core/errors";
import { jobServiceAccount } from "../core/platform/storage";
import type { GpuPoolPlan } from "../core/pools";
import { jobNodesOn } from "../core/forecast/job";
import { rayImageEfaProblem } from "../core/ray";
import type { ForecastResult } from "../core/forecast/types";
import type { z } from "zod";
import {
  configMapBytes,
  contractMounts,
  MAX_CONFIGMAP_BYTES,
  tuningConfigMap,
  type ConfigMapTarget,
} from "./contract/configmaps";
import { API_VERSION, planDigest, type TuningDocument } from "./contract/document";
import type { KubeObject } from "./k8s/types";
import { strategyOf } from "./kinds/table";
import type { InputOf, KindStrategy, MemoryPlanOf, SpecOf, TuneInput, TuningOf } from "./kinds/api/strategy";
import { MANAGED_BY } from "./k8s/labels";
import { rayResourceOf } from "./ray-resources";
import { checkPipVerified, runtimeEnvYAML } from "./rayjob/runtime-env";
import { resolveGpuPool, type WorkloadContext } from "./context";
import { planPoolMemory, type FallbackFit } from "./fallback-memory";
import type { GpuInstanceType } from "../core/catalog/instances";

/** A planned workload of kind `K`. */
export interface WorkloadPlanOf<K extends WorkloadKind> {
  readonly name: string;
  readonly kind: K;
  /** An example on placeholder data: rendered, never submitted by `pulumi up`. */
  readonly example: boolean;
  readonly environment: Environment;
  readonly nodePool: string;
  /** The pool's own instance type (its fallback types, if any, are in {@link fallback}). */
  readonly instanceType: GpuInstanceType;
  /**
   * On a pool with fallback instance types: the type whose GPU memory binds the plan, and (dev only) the types the job
   * would not fit on. Undefined on a pool of one type.
   */
  readonly fallback: FallbackFit | undefined;
  readonly gpus: number;
  /** The model as the workload named it (catalog id), or "custom". */
  readonly modelName: string;
  /** Memory estimate and the kind's typed knobs. */
  readonly memory: MemoryPlanOf<K>;
  readonly shape: ClusterShapePlan;
  /** Ray Train (training kinds) or Ray Data (embedding and inference) settings, with their reasons. */
  readonly tuning: TuningOf<K>;
  /**
   * Time and cost to finish (core/forecast/): wall time, GPU-hours, cost per run, predicted GPU utilization and what
   * bounds it; or why the spec does not say enough to forecast them.
   */
  readonly forecast: ForecastResult;
  /** Average GPU utilization the job should hold (its alert's threshold and `ray-gpu report`'s promise), in %. */
  readonly gpuUtilizationTargetPercent: number;
  /**
   * Digest of everything the job receives from the plan (its tuning document, the files beside it, its cluster shape):
   * the `workload.planDigest` of its tuning document, and of the run records its runs write.
   */
  readonly planDigest: string;
}

/** A plan's tuning document and the files beside it, as `render` writes them into the tuning ConfigMap. */
interface PlannedDocument {
  readonly document: TuningDocument;
  readonly files: Readonly<Record<string, object>>;
  /** The context the document was made in: `render` reuses it only in the same one. */
  readonly ctx: WorkloadContext;
}

/** A planned workload of any kind. */
export type WorkloadPlan = { [K in WorkloadKind]: WorkloadPlanOf<K> }[WorkloadKind];

/** Shared machinery of every kind. */
export class Workload<K extends WorkloadKind = WorkloadKind> {
  /** The validated spec, defaults applied. */
  readonly spec: SpecOf<K>;
  private readonly strategy: KindStrategy<K>;
  /** The document of each plan this construct made, so `render` of that plan in its context does not build it again. */
  private readonly documents = new WeakMap<WorkloadPlanOf<K>, PlannedDocument>();

  /**
   * @param spec A spec as written or validated; its `kind` picks the strategy.
   * @param kind The kind `spec` must be (the subclasses pass theirs); any kind when left out.
   * @throws ConfigError listing every invalid field of `spec`.
   */
  constructor(spec: InputOf<K> | SpecOf<K>, kind?: K) {
    const schema: z.ZodType = kind === undefined ? WorkloadSpecSchema : strategyOf(kind).schema;
    const result = schema.safeParse(spec);
    if (!result.success) {
      const { kind: given, name } = spec as { kind?: unknown; name?: unknown };
      const prefix = workloadLabel(typeof given === "string" ? given : kind, name);
      throw new ConfigError(
        toConfigIssues(result.error, schema, spec, (p) => (p.length > 0 ? `${prefix}.${joinPath(p)}` : prefix)),
      );
    }
    this.spec = result.data as SpecOf<K>;
    this.strategy = strategyOf(this.spec.kind as K);
  }

  /** Config path of the workload in error messages: the context's, else its kind and name. */
  private pathIn(ctx: WorkloadContext): string {
    return ctx.path ?? workloadLabel(this.spec.kind, this.spec.name);
  }

  /**
   * Plans the workload for a stack: pool, cluster shape, memory and knobs, tuning.
   * @throws ConfigError when the job cannot be placed on the stack's pools. A job that does not fit in GPU memory still
   *   plans, with `memory.fits` false and the ways out in `memory.advice`.
   */
  plan(ctx: WorkloadContext): WorkloadPlanOf<K> {
    const path = this.pathIn(ctx);
    checkPipVerified(this.spec.runtimeEnv?.pip, ctx.environment, path);
    const pool = resolveGpuPool(this.spec, ctx.pools, path);
    const shape = this.shapeOn(pool, ctx, path);
    const { memory, fallback } = planPoolMemory(pool, {
      planMemory: (p, gpus) => this.strategy.planMemory(gpus === undefined ? this.spec : { ...this.spec, gpus }, p),
      shape,
      environment: ctx.environment,
      path,
      poolIndex: ctx.pools.gpu.indexOf(pool),
    });
    const { tuning, forecast } = this.tuneAndForecast(ctx, pool, { memory, shape }, path);
    const { spec } = this;
    const modelName = typeof spec.model === "string" ? spec.model : "custom";
    const base = {
      name: spec.name,
      example: spec.example,
      environment: ctx.environment,
      nodePool: pool.name,
      instanceType: pool.instanceType,
      fallback,
      gpus: spec.gpus,
    };
    const gpuUtilizationTargetPercent =
      spec.gpuUtilizationTargetPercent ?? DEFAULT_GPU_UTILIZATION_TARGET[spec.kind as WorkloadKind];
    const planned = {
      ...base,
      kind: spec.kind as K,
      modelName,
      memory,
      shape,
      tuning,
      forecast,
      gpuUtilizationTargetPercent,
    };
    const documented = this.plannedDocument(ctx, planned, path);
    const plan = { ...planned, planDigest: documented.document.workload.planDigest };
    this.documents.set(plan, documented);
    return plan;
  }

  /** The kind's tuning of the planned memory and shape on `pool`, and the job's forecast from it. */
  private tuneAndForecast(
    ctx: WorkloadContext,
    pool: GpuPoolPlan,
    planned: { memory: MemoryPlanOf<K>; shape: ClusterShapePlan },
    path: string,
  ): { tuning: TuningOf<K>; forecast: ForecastResult } {
    const input = this.tuneInput(ctx, { ...planned, nodePool: pool.name }, path);
    const tuning = this.strategy.tune(input);
    const nodes = jobNodesOn(pool, planned.shape.worker.replicas, this.spec.gpus);
    return { tuning, forecast: this.strategy.forecast({ ...input, tuning, nodes }) };
  }

  /** The tuning document of `plan` (its digest left out of what it digests) and the kind's files. */
  private plannedDocument(
    ctx: WorkloadContext,
    plan: Omit<WorkloadPlanOf<K>, "planDigest">,
    path: string,
  ): PlannedDocument {
    const kindDoc = this.strategy.document({ ...this.tuneInput(ctx, plan, path), tuning: plan.tuning });
    return { document: this.document(plan, kindDoc, ctx.storagePrefix ?? ""), files: kindDoc.files, ctx };
  }

  /**
   * The Kubernetes objects of this workload: its tuning ConfigMap, the RayJob, its PodDisruptionBudget and its
   * NetworkPolicy (its Ray pods reach each other, no other job's), and its alerts with `ctx.alerts`. The job also mounts the namespace's
   * runtime-package ConfigMap (`runtimeConfigMap(namespace, ctx.runtime)`; `RayGpuPlatform` and `RayGpuRuntime` create it).
   * @throws ConfigError when `image` or `entrypoint` is missing, or the job does not fit in GPU memory.
   */
  render(ctx: WorkloadContext, plan: WorkloadPlanOf<K> = this.plan(ctx)): KubeObject[] {
    const path = this.pathIn(ctx);
    const { image, entrypoint } = this.renderable(plan, path);
    const target: ConfigMapTarget = {
      workload: this.spec.name,
      namespace: ctx.namespace,
      labels: { ...MANAGED_BY, "ray-gpu.io/workload": this.spec.name },
    };
    const cached = this.documents.get(plan);
    const { document, files } = cached?.ctx === ctx ? cached : this.plannedDocument(ctx, plan, path);
    const tuning = tuningConfigMap(target, document, files);
    if (configMapBytes(tuning) > MAX_CONFIGMAP_BYTES) {
      throw new ConfigError([
        {
          path: `${path}.sweep`,
          message:
            `the tuning ConfigMap would hold ${configMapBytes(tuning)} bytes, over Kubernetes' 1 MiB limit: ` +
            `use fewer sweep settings`,
        },
      ]);
    }
    const ray = rayResourceOf(this.strategy.rayResource).render({
      name: this.spec.name,
      namespace: ctx.namespace,
      kind: this.spec.kind,
      environment: ctx.environment,
      image,
      entrypoint,
      shape: plan.shape,
      userEnv: this.spec.env,
      secretEnv: resolveSecretEnv(this.spec.name, this.spec.secretEnv),
      serviceAccountName: ctx.serviceAccountName ?? jobServiceAccount(this.spec.name),
      knobs: plan.memory.knobs,
      contract: contractMounts(tuning, ctx.runtime, this.spec.env["PYTHONPATH"]),
      runtimeEnvYAML: this.spec.runtimeEnv && runtimeEnvYAML(this.spec.runtimeEnv),
      queueName: ctx.queueName,
    });
    const alerts = ctx.alerts ? [jobPrometheusRule(jobAlertInput(this.alertFacts(plan, ctx)), target.labels)] : [];
    return [tuning, ...ray, ...alerts];
  }

  /** What the job's alerts read from its plan. */
  private alertFacts(plan: WorkloadPlanOf<K>, ctx: WorkloadContext): JobAlertFacts {
    const tuning = plan.tuning as TrainingTuning | DataJobTuning;
    return {
      name: plan.name,
      kind: plan.kind,
      namespace: ctx.namespace,
      preRunningDeadlineSeconds: plan.shape.lifecycle.preRunningDeadlineSeconds,
      dataWorkingSetBytes: tuning.engine === "ray-data" ? tuning.data.data.workingSetBytes : undefined,
      gpuUtilizationTargetPercent: plan.gpuUtilizationTargetPercent,
      plannedStepSeconds: tuning.engine === "ray-train" ? tuning.interruptions.stepSeconds : undefined,
    };
  }

  /** The kind's own rules and the cluster shape, all problems reported together. */
  private shapeOn(pool: GpuPoolPlan, ctx: WorkloadContext, path: string): ClusterShapePlan {
    const issues = new IssueCollector();
    const { spec } = this;
    this.strategy.check(spec, pool, path, issues);
    const input = {
      environment: ctx.environment,
      gpus: spec.gpus,
      gpuPool: pool,
      headPool: ctx.pools.cpu,
      needs: this.strategy.needs,
      maxRuntimeMinutes: spec.maxRuntimeMinutes,
      queued: ctx.queueName !== undefined,
      path,
    };
    const shape = collectIssues(() => planClusterShape(input), issues);
    const efaImage = shape?.worker.efa && spec.image !== undefined ? rayImageEfaProblem(spec.image) : undefined;
    if (efaImage) issues.add(`${path}.image`, efaImage, spec.image);
    // Hints computed from a refused gpus count would be refused again once gpus is fixed: they wait for a valid one.
    if (!issues.issues.some((i) => i.path === `${path}.gpus`)) this.strategy.checkGpus?.(spec, pool, path, issues);
    if (shape && issues.issues.length === 0) return shape;
    throw new ConfigError(issues.issues);
  }

  private tuneInput(
    ctx: WorkloadContext,
    planned: { memory: MemoryPlanOf<K>; shape: ClusterShapePlan; nodePool: string },
    path: string,
  ): TuneInput<K> {
    return {
      spec: this.spec,
      memory: planned.memory,
      shape: planned.shape,
      node: ctx.pools.gpu.find((p) => p.name === planned.nodePool)!.node,
      environment: ctx.environment,
      storagePrefix: ctx.storagePrefix ?? "",
      path,
    };
  }

  /** The image and entrypoint, or every reason the workload cannot be rendered yet. */
  private renderable(plan: WorkloadPlanOf<K>, path: string): { image: string; entrypoint: string } {
    const issues = new IssueCollector();
    const { image, entrypoint } = this.spec;
    if (image === undefined)
      issues.add(`${path}.image`, "required to render: the container image with Ray and your code");
    if (entrypoint === undefined)
      issues.add(`${path}.entrypoint`, "required to render: the command the Ray job runs, e.g. python train.py");
    if (!plan.memory.fits) issues.add(`${path}.gpus`, adviceText(plan.memory.advice), this.spec.gpus);
    if (image !== undefined && entrypoint !== undefined && issues.issues.length === 0) return { image, entrypoint };
    throw new ConfigError(issues.issues);
  }

  /** The whole tuning document: the workload with its plan's digest, its knobs and its kind's sections. */
  private document(
    plan: Omit<WorkloadPlanOf<K>, "planDigest">,
    kindDoc: { sections: object; files: object },
    storagePrefix: string,
  ): TuningDocument {
    const model = plan.memory.model;
    const workload = {
      name: plan.name,
      kind: plan.kind,
      environment: plan.environment,
      model: plan.modelName,
      modelFamily: model.family,
      modelType: model.type,
      runRecordPrefix: `${storagePrefix}run-records/${plan.name}/`,
    };
    const body = { apiVersion: API_VERSION, kind: "Tuning", workload, knobs: plan.memory.knobs, ...kindDoc.sections };
    const digest = planDigest({ document: body, files: kindDoc.files, shape: plan.shape });
    return { ...body, workload: { ...workload, planDigest: digest } } as TuningDocument;
  }
}

/**
 * How errors name a workload built outside a stack: `TrainingJob "llama-ddp"`, its kind and name (`TrainingJob` while it
 * has no name, `workload` while it has no kind either).
 */
export function workloadLabel(kind: unknown, name: unknown): string {
  const base = typeof kind === "string" && kind !== "" ? kind : "workload";
  return typeof name === "string" ? `${base} ${showValue(name)}` : base;
}

/** Runs `fn`; a ConfigError's issues go to `issues` instead of propagating. */
function collectIssues<T>(fn: () => T, issues: IssueCollector): T | undefined {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    issues.addAll(e.issues);
    return undefined;
  }
}

/** Multi-node data-parallel training (DDP or DeepSpeed ZeRO) with Ray Train. */
export class TrainingJob extends Workload<"TrainingJob"> {
  constructor(spec: InputOf<"TrainingJob">) {
    super(spec, "TrainingJob");
  }
}

/** Supervised fine-tuning with LoRA or QLoRA, text or vision-language. */
export class LoRAFineTune extends Workload<"LoRAFineTune"> {
  constructor(spec: InputOf<"LoRAFineTune">) {
    super(spec, "LoRAFineTune");
  }
}

/** Ray Data batch embeddings with an encoder. */
export class EmbeddingPipeline extends Workload<"EmbeddingPipeline"> {
  constructor(spec: InputOf<"EmbeddingPipeline">) {
    super(spec, "EmbeddingPipeline");
  }
}

/** Offline LLM inference over a dataset. */
export class BatchInference extends Workload<"BatchInference"> {
  constructor(spec: InputOf<"BatchInference">) {
    super(spec, "BatchInference");
  }
}

/** The construct for a workload entry of any kind. */
export function constructFor(spec: WorkloadSpec): Workload {
  return new Workload(spec);
}
