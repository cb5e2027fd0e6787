/**
 * Plans and renders every workload of a stack: the node pools, each workload's plan and the Kubernetes
 * objects, checked against KubeRay's rules before anything is applied. Pure; the CLI and `stacks/` share it.
 */
import type { StackConfig } from "../core/config/stack";
import type { WorkloadSpec } from "../core/config/workloads";
import { ConfigError, type ConfigIssue } from "../core/errors";
import { planPools, type PoolsPlan } from "../core/pools";
import { checkRayJob } from "./rayjob/checks";
import type { KubeObject } from "./rayjob/types";
import { BatchInference, EmbeddingPipeline, LoRAFineTune, TrainingJob, type Workload, type WorkloadPlan } from "./workload";

/** Everything `ray-gpu plan` shows and `ray-gpu render` writes for one stack. */
export interface StackPlan {
  readonly environment: StackConfig["environment"];
  readonly region: string;
  readonly namespace: string;
  readonly pools: PoolsPlan;
  readonly workloads: readonly WorkloadPlan[];
  /**
   * Kubernetes objects per rendered workload, in workload order. `example` workloads are rendered too; the Pulumi
   * program does not submit them.
   */
  readonly objects: readonly { readonly workload: string; readonly example: boolean; readonly objects: readonly KubeObject[] }[];
  /** Workloads planned but not rendered, and why (no image or entrypoint yet, or not fitting). */
  readonly notRendered: readonly { readonly workload: string; readonly reason: string }[];
}

/** The construct for a workload entry. */
export function constructFor(spec: WorkloadSpec): Workload {
  switch (spec.kind) {
    case "TrainingJob":
      return new TrainingJob(spec);
    case "LoRAFineTune":
      return new LoRAFineTune(spec);
    case "EmbeddingPipeline":
      return new EmbeddingPipeline(spec);
    case "BatchInference":
      return new BatchInference(spec);
  }
}

/** Options of {@link planStack}. */
export interface PlanStackOptions {
  /**
   * Every workload must render (image, entrypoint, fits in memory); otherwise their problems are errors.
   * @default false: workloads that cannot render yet are listed in `notRendered`
   */
  readonly requireRender?: boolean;
  /**
   * Config path of workload `i` in error messages.
   * @default - `ray-gpu:workloads[i]`
   */
  readonly workloadPath?: (index: number) => string;
}

/**
 * Plans the stack.
 * @throws ConfigError listing every workload problem (placement, KubeRay rules, and with `requireRender` the
 *   fields rendering needs and memory fit) at once.
 */
export function planStack(config: StackConfig, options: PlanStackOptions = {}): StackPlan {
  const pools = planPools(config.platform);
  const issues: ConfigIssue[] = [];
  const workloads: WorkloadPlan[] = [];
  const objects: { workload: string; example: boolean; objects: KubeObject[] }[] = [];
  const notRendered: { workload: string; reason: string }[] = [];
  config.workloads.forEach((spec, i) => {
    const ctx = {
      environment: config.environment,
      pools,
      namespace: config.platform.workloadNamespace,
      storagePrefix: config.platform.storage.prefix,
      path: options.workloadPath?.(i) ?? `ray-gpu:workloads[${i}]`,
    };
    try {
      const construct = constructFor(spec);
      const plan = construct.plan(ctx);
      workloads.push(plan);
      try {
        const rendered = construct.render(ctx, plan);
        for (const obj of rendered) if (obj.kind === "RayJob") issues.push(...checkRayJob(obj, pools));
        objects.push({ workload: spec.name, example: spec.example, objects: rendered });
      } catch (err) {
        if (!(err instanceof ConfigError) || options.requireRender) throw err;
        notRendered.push({ workload: spec.name, reason: err.issues.map((x) => `${x.path}: ${x.message}`).join("; ") });
      }
    } catch (err) {
      if (err instanceof ConfigError) issues.push(...err.issues);
      else throw err;
    }
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return { environment: config.environment, region: config.region, namespace: config.platform.workloadNamespace, pools, workloads, objects, notRendered };
}
