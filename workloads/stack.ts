/**
 * Plans and renders every workload of a stack: the node pools, each workload's plan and the Kubernetes
 * objects, checked against KubeRay's rules before anything is applied. Pure; the CLI and `stacks/` share it.
 */
import type { StackConfig } from "../core/config/stack";
import { ConfigError, type ConfigIssue } from "../core/errors";
import { POOL_LABEL, type PoolsPlan } from "../core/pools";
import { planPlatform, type PlatformPlan } from "../core/platform-plan";
import type { DestroyLeftover } from "../core/platform/destroy";
import { apiEndpointNote } from "../core/config/api-endpoint";
import { schedulingIssues } from "./scheduling";
import {
  planAdmission,
  SUBMITTER_REQUEST,
  type AdmissionPlan,
  type QueueDemand,
  type QueuePlan,
} from "../core/platform/queueing";
import { monitoringObjects } from "./observability/monitoring";
import { queueObjects } from "./queue/kueue";
import { neverAdmittedIssues } from "./queue/never-admitted";
import { runtimeConfigMap, type RuntimePackage } from "./contract/configmaps";
import { MANAGED_BY } from "./k8s/labels";
import { namespacePolicies } from "./security/namespace";
import { checkRayResources } from "./ray-resources";
import type { KubeObject } from "./k8s/types";
import { Workload, type WorkloadPlan } from "./workload";
import type { WorkloadContext } from "./context";

/** One rendered workload's Kubernetes objects. */
export interface RenderedWorkload {
  readonly workload: string;
  readonly example: boolean;
  readonly objects: readonly KubeObject[];
}

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
  readonly objects: readonly RenderedWorkload[];
  /**
   * Objects every rendered job of the namespace shares: the runtime package's ConfigMap and the namespace's
   * NetworkPolicies. Empty when nothing renders.
   */
  readonly shared: readonly KubeObject[];
  /** Workloads planned but not rendered, and why (no image or entrypoint yet, or not fitting). */
  readonly notRendered: readonly NotRendered[];
  /**
   * The job queue (Kueue) when `platform.queueing.enabled`: quotas per pool, and who would run and who would wait if
   * every planned job that fits were submitted at once, in config order (examples too, which `pulumi up` does not
   * submit: they are marked, so a stack of examples still shows what its jobs would do).
   */
  readonly queue:
    | { readonly plan: QueuePlan; readonly demands: readonly QueueDemand[]; readonly admission: AdmissionPlan }
    | undefined;
  /** Where `pulumi up` reaches the API of a cluster the stack creates; undefined when it adopts one. */
  readonly apiEndpoint: string | undefined;
  /** What `pulumi destroy` leaves behind or blocks on (`core/platform/destroy.ts`). */
  readonly destroy: readonly DestroyLeftover[];
}

/** A workload that planned but cannot render yet: its problems, and the same as one line. */
export interface NotRendered {
  readonly workload: string;
  readonly issues: readonly ConfigIssue[];
  /** `path: message` of each issue, joined by "; ". */
  readonly reason: string;
}

/** Options of {@link planStack}. */
export interface PlanStackOptions {
  /** The runtime package every RayJob mounts (`loadRuntimePackage()`). */
  readonly runtime: RuntimePackage;
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
  /**
   * Takes each workload's objects as soon as they are made and pass KubeRay's checks, in workload order (`render`
   * writes them at once), and the plan keeps none: its `objects` then lists each rendered workload with no objects.
   * A stack that fails planning after some workloads were handed over throws as without it.
   * @default - the plan keeps every object
   */
  readonly renderedTo?: (rendered: RenderedWorkload) => void;
}

/** One workload's plan and objects (or why it cannot be rendered yet), its problems added to `issues`. */
function planWorkload(
  spec: StackConfig["workloads"][number],
  ctx: WorkloadContext,
  options: PlanStackOptions,
  issues: ConfigIssue[],
) {
  try {
    const construct = new Workload(spec);
    // A Workload of any kind plans one kind at a time: its plan is one member of the union.
    const plan = construct.plan(ctx) as WorkloadPlan;
    try {
      const objects = construct.render(ctx, plan);
      const checked = checkRayResources(objects, ctx.pools);
      issues.push(...checked);
      const rendered = { workload: spec.name, example: spec.example, objects };
      if (!options.renderedTo || checked.length > 0) return { plan, rendered };
      options.renderedTo(rendered);
      return { plan, rendered: { ...rendered, objects: [] } };
    } catch (err) {
      if (!(err instanceof ConfigError) || options.requireRender) throw err;
      return {
        plan,
        notRendered: {
          workload: spec.name,
          issues: err.issues,
          reason: err.issues.map((x) => `${x.path}: ${x.message}`).join("; "),
        },
      };
    }
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    issues.push(...err.issues);
    return {};
  }
}

/**
 * What every job of the namespace shares: the runtime package, the NetworkPolicies, the queue's objects and, with
 * observability, the Ray PodMonitor, the stack's rules and the jobs dashboard.
 */
function sharedObjects(
  config: StackConfig,
  runtime: RuntimePackage,
  queue: QueuePlan | undefined,
  pools: PoolsPlan,
): KubeObject[] {
  const namespace = config.platform.workloadNamespace;
  const scaleToZero = pools.gpu.filter((p) => p.minNodes === 0).map((p) => p.name);
  return [
    runtimeConfigMap(namespace, runtime, MANAGED_BY),
    ...namespacePolicies(namespace, { httpsCidrs: config.platform.security.httpsEgressCidrs }, MANAGED_BY),
    ...(queue ? queueObjects(queue, MANAGED_BY) : []),
    ...(config.platform.observability.enabled
      ? monitoringObjects(namespace, config.environment, scaleToZero, MANAGED_BY)
      : []),
  ];
}

/** What a planned job asks of the queue: its GPU pool's GPUs, CPUs and memory, and the head and submitter's. */
export function queueDemand(plan: WorkloadPlan): QueueDemand {
  const { head, worker } = plan.shape;
  return {
    workload: plan.name,
    example: plan.example,
    gpuPool: worker.nodeSelector[POOL_LABEL] ?? "",
    gpus: worker.replicas * worker.gpusPerWorker,
    workerCpus: worker.replicas * worker.cpus,
    workerMemoryGiB: worker.replicas * worker.memoryGiB,
    headCpus: head.cpus + SUBMITTER_REQUEST.cpuMillis / 1000,
    headMemoryGiB: head.memoryGiB + SUBMITTER_REQUEST.memoryMiB / 1024,
  };
}

/**
 * Why planned jobs would never run: pods no node takes (alone or beside the jobs Kueue admits with them), and jobs
 * Kueue can never admit. A job whose pods never fit is reported once, for its pods: the quota it would never get
 * either adds nothing.
 */
function runProblems(
  platform: PlatformPlan,
  fitting: readonly WorkloadPlan[],
  queued: { readonly demands: readonly QueueDemand[]; readonly admission: AdmissionPlan | undefined },
  jobPath: (workload: string) => string,
): ConfigIssue[] {
  const jobs = fitting.map((plan) => ({ plan, path: jobPath(plan.name) }));
  const unschedulable = schedulingIssues(platform, jobs, queued.admission);
  const stuck = platform.queue ? neverAdmittedIssues(platform.queue, queued.demands, jobPath) : [];
  return [...unschedulable, ...stuck.filter((s) => !unschedulable.some((u) => u.path === s.path))];
}

/**
 * Plans the stack.
 * @throws ConfigError listing every workload problem (placement, KubeRay rules, jobs Kueue can never admit, and
 *   with `requireRender` the fields rendering needs and memory fit) at once.
 */
export function planStack(config: StackConfig, options: PlanStackOptions): StackPlan {
  const platform = planPlatform(config);
  const { pools, queue } = platform;
  const issues: ConfigIssue[] = [];
  const pathOf = (i: number) => options.workloadPath?.(i) ?? `ray-gpu:workloads[${i}]`;
  const results = config.workloads.map((spec, i) =>
    planWorkload(
      spec,
      {
        environment: config.environment,
        pools,
        namespace: config.platform.workloadNamespace,
        storagePrefix: config.platform.storage.prefix,
        runtime: options.runtime,
        ...(queue ? { queueName: queue.name } : {}),
        alerts: config.platform.observability.enabled,
        path: pathOf(i),
      },
      options,
      issues,
    ),
  );
  if (issues.length > 0) throw new ConfigError(issues);
  const rendered = results.flatMap((r) => (r.rendered ? [r.rendered] : []));
  const workloads = results.flatMap((r) => (r.plan ? [r.plan] : []));
  const fitting = workloads.filter((w) => w.memory.fits);
  const demands = fitting.map(queueDemand);
  const admission = queue && planAdmission(queue, demands);
  const indexOf = new Map(config.workloads.map((w, i) => [w.name, i]));
  const problems = runProblems(platform, fitting, { demands, admission }, (name) => pathOf(indexOf.get(name)!));
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    environment: config.environment,
    region: config.region,
    namespace: config.platform.workloadNamespace,
    pools,
    workloads,
    objects: rendered,
    shared: rendered.length > 0 ? sharedObjects(config, options.runtime, queue, pools) : [],
    notRendered: results.flatMap((r) => (r.notRendered ? [r.notRendered] : [])),
    queue: queue && admission && { plan: queue, demands, admission },
    apiEndpoint: apiEndpointNote(config.platform.cluster),
    destroy: platform.destroy,
  };
}
