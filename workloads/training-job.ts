/**
 * `TrainingJob`: multi-node data-parallel training with Ray Train (DDP). Takes a small typed spec and emits a
 * RayJob whose cluster shape fits the stack's GPU pool, with a reason for every value.
 */
import { planClusterShape, type ClusterShapePlan, type WorkerNeeds } from "../core/cluster/shape";
import { TrainingJobSpecSchema, type TrainingJobSpec, type TrainingJobSpecInput } from "../core/config/workloads";
import { ConfigError, IssueCollector } from "../core/errors";
import { joinPath, toConfigIssues } from "../core/config/zod-issues";
import { resolveGpuPool, type WorkloadContext } from "./context";
import { renderRayJob } from "./rayjob/render";
import type { KubeObject } from "./rayjob/types";

/** What DDP training needs from each worker pod. */
export const TRAINING_WORKER_NEEDS: WorkerNeeds = {
  objectStoreFraction: 0.2,
  shmExtraGiBPerGpu: 2,
  minHeapGiBPerGpu: 4,
  why: {
    objectStore: "training moves little through the object store (Ray Data ingest blocks, reported metrics, checkpoint handles), so it gets less than Ray's 30% default and the processes keep the rest",
    shmExtra: "PyTorch DataLoader workers pass batches through shared memory",
    minHeap: "each rank loads the model and optimizer on CPU before moving them to the GPU",
  },
};

/** A planned workload: the chosen pool, the cluster shape and every decision. */
export interface WorkloadPlan {
  readonly name: string;
  readonly kind: "TrainingJob";
  readonly environment: WorkloadContext["environment"];
  readonly nodePool: string;
  readonly instanceType: string;
  readonly gpus: number;
  readonly shape: ClusterShapePlan;
}

/** Multi-node DDP training on A10G GPUs. */
export class TrainingJob {
  /** The validated spec, defaults applied. */
  readonly spec: TrainingJobSpec;

  /** @throws ConfigError listing every invalid field of `spec`. */
  constructor(spec: TrainingJobSpecInput | TrainingJobSpec) {
    const result = TrainingJobSpecSchema.safeParse(spec);
    if (!result.success) {
      throw new ConfigError(toConfigIssues(result.error, TrainingJobSpecSchema, spec, (p) => joinPath(p) || "(root)"), "TrainingJob");
    }
    this.spec = result.data;
  }

  /**
   * Plans the job for a stack.
   * @throws ConfigError when the job cannot fit the stack's pools.
   */
  plan(ctx: WorkloadContext): WorkloadPlan {
    const path = ctx.path ?? "workload";
    const issues = new IssueCollector();
    const pool = resolveGpuPool(this.spec, ctx.pools, path, issues);
    issues.throwIfAny();
    const shape = planClusterShape({
      environment: ctx.environment,
      gpus: this.spec.gpus,
      gpuPool: pool!,
      headPool: ctx.pools.cpu,
      needs: TRAINING_WORKER_NEEDS,
      maxRuntimeMinutes: this.spec.maxRuntimeMinutes,
      path,
    });
    return {
      name: this.spec.name,
      kind: "TrainingJob",
      environment: ctx.environment,
      nodePool: pool!.name,
      instanceType: pool!.instanceType,
      gpus: this.spec.gpus,
      shape,
    };
  }

  /** The Kubernetes objects this job needs (the RayJob). */
  render(ctx: WorkloadContext, plan: WorkloadPlan = this.plan(ctx)): KubeObject[] {
    const job = renderRayJob({
      name: this.spec.name,
      namespace: ctx.namespace,
      kind: "TrainingJob",
      environment: ctx.environment,
      image: this.spec.image,
      entrypoint: this.spec.entrypoint,
      shape: plan.shape,
      userEnv: this.spec.env,
    });
    return [job];
  }
}
