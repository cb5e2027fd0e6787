/**
 * Plans and renders every workload of a stack: the node pools, each workload's plan and the Kubernetes
 * objects, checked against KubeRay's rules before anything is applied. Pure; the CLI and `stacks/` share it.
 */
import type { StackConfig } from "../core/config/stack";
import { ConfigError, type ConfigIssue } from "../core/errors";
import { planPools, type PoolsPlan } from "../core/pools";
import { checkRayJob } from "./rayjob/checks";
import type { KubeObject } from "./rayjob/types";
import { TrainingJob, type WorkloadPlan } from "./training-job";

/** Everything `ray-gpu plan` shows and `ray-gpu render` writes for one stack. */
export interface StackPlan {
  readonly environment: StackConfig["environment"];
  readonly region: string;
  readonly namespace: string;
  readonly pools: PoolsPlan;
  readonly workloads: readonly WorkloadPlan[];
  /** Kubernetes objects per workload, in workload order. */
  readonly objects: readonly { readonly workload: string; readonly objects: readonly KubeObject[] }[];
}

/** Builds the construct for a workload entry. */
export function constructFor(spec: StackConfig["workloads"][number]): TrainingJob {
  switch (spec.kind) {
    case "TrainingJob":
      return new TrainingJob(spec);
  }
}

/**
 * Plans the stack.
 * @throws ConfigError listing every workload problem (fit, pools, KubeRay rules) at once.
 */
export function planStack(config: StackConfig): StackPlan {
  const pools = planPools(config.platform);
  const issues: ConfigIssue[] = [];
  const workloads: WorkloadPlan[] = [];
  const objects: { workload: string; objects: KubeObject[] }[] = [];
  config.workloads.forEach((spec, i) => {
    const ctx = { environment: config.environment, pools, namespace: config.platform.workloadNamespace, path: `ray-gpu:workloads[${i}]` };
    try {
      const construct = constructFor(spec);
      const plan = construct.plan(ctx);
      const rendered = construct.render(ctx, plan);
      for (const obj of rendered) if (obj.kind === "RayJob") issues.push(...checkRayJob(obj, pools));
      workloads.push(plan);
      objects.push({ workload: spec.name, objects: rendered });
    } catch (err) {
      if (err instanceof ConfigError) issues.push(...err.issues);
      else throw err;
    }
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return { environment: config.environment, region: config.region, namespace: config.platform.workloadNamespace, pools, workloads, objects };
}
