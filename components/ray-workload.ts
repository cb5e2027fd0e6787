/**
 * `RayWorkload`: applies a workload's rendered objects (a `ray.io/v1` RayJob and the ConfigMaps it mounts) as
 * Kubernetes resources. Thin: the objects come fully planned and checked from `workloads/`. The cluster's Kubernetes
 * provider, and what the objects wait for (the KubeRay operator, the namespace), come through the resource options.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { loadRuntimePackage } from "../io/runtime-package";
import { runtimeConfigMap, type RuntimePackage } from "../workloads/contract/configmaps";
import type { KubeObject } from "../workloads/k8s/types";
import { MANAGED_BY } from "../workloads/k8s/labels";
import { workloadSecretName } from "../workloads/security/secrets";
import { childOptions, nameChecks, withOrdering, type OrderingSource } from "./child-options";

/** Arguments of {@link RayWorkload}. */
export interface RayWorkloadArgs {
  /**
   * Objects rendered by a workload construct (e.g. `new TrainingJob(spec).render(ctx)`): one RayJob, its ConfigMaps,
   * its PodDisruptionBudget, its NetworkPolicy (its Ray pods reach each other, no other job's) and, with `alerts` in
   * the context, its PrometheusRule.
   */
  readonly objects: readonly KubeObject[];
  /**
   * Values of the workload's `secretEnv` variables that come from Pulumi secret config, by variable name: stored in
   * the Secret `<workload>-secrets` the RayJob references (kept secret in Pulumi's state).
   * @default {} (no Secret is created)
   */
  readonly secrets?: Readonly<Record<string, pulumi.Input<string>>>;
  /**
   * The platform the job runs on: its Kubernetes provider, and what a job waits for there (the KubeRay operator whose
   * chart installs the RayJob kind, the namespace, the service account, the NetworkPolicies, the queue, the monitoring
   * CRDs: `platform.workloadOptions()`), added to the resource options. Given only `{ providers }`, the RayJob is
   * created before the operator's CRD and refused.
   * @default - none: the provider and what to wait for come through the resource options
   */
  readonly platform?: Pick<OrderingSource, "workloadOptions">;
}

/**
 * One workload on the cluster. On a platform: `new RayWorkload("sft", { objects, platform })`; on a cluster you run:
 * `new RayWorkload("sft", { objects }, { provider, dependsOn: [kuberayOperator, namespace] })`. Every object waits for
 * `dependsOn`, and the RayJob also for its ConfigMaps.
 */
export class RayWorkload extends pulumi.ComponentResource {
  /** Name of the RayJob. */
  public readonly rayJobName: pulumi.Output<string>;

  constructor(name: string, args: RayWorkloadArgs, options?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(withOrdering(args.platform?.workloadOptions(), options));
    const opts = names.opts;
    super("ray-gpu:index:RayWorkload", name, {}, opts);
    names.own(this);
    const jobs = args.objects.filter((o) => o.kind === "RayJob");
    if (jobs.length !== 1)
      throw new pulumi.RunError(`RayWorkload ${name} needs exactly one RayJob among its objects, got ${jobs.length}`);
    const job = jobs[0]!;
    const configMaps = this.configMaps(name, job, args.objects, opts);
    this.sideObjects(name, job, args.objects, opts);
    const secrets =
      args.secrets && Object.keys(args.secrets).length ? [this.secret(name, job, args.secrets, opts)] : [];
    const rayJob = new k8s.apiextensions.CustomResource(
      `${name}-rayjob`,
      { apiVersion: job.apiVersion, kind: job.kind, metadata: job.metadata, spec: job.spec },
      // KubeRay does not act on spec changes to a submitted RayJob: replace it so a change re-runs the job.
      {
        ...childOptions(this, opts, [...configMaps, ...secrets]),
        replaceOnChanges: ["spec"],
        deleteBeforeReplace: true,
        // Kueue owns `suspend` (set on create, cleared on admission): never a reason to replace a running job.
        ignoreChanges: ["spec.suspend"],
      },
    );
    this.rayJobName = rayJob.metadata.apply((m) => m.name ?? name);
    names.report(`RayWorkload ${name}`);
    this.registerOutputs({ rayJobName: this.rayJobName });
  }

  /** The ConfigMaps the RayJob mounts (it waits for them). */
  private configMaps(name: string, job: KubeObject, objects: readonly KubeObject[], opts?: ChildOpts) {
    return objects
      .filter((o) => o.kind === "ConfigMap")
      .map((o) => {
        const child = objectChild(name, job, o, "configmap");
        return new k8s.core.v1.ConfigMap(child.name, { metadata: o.metadata, data: o.data }, this.options(child, opts));
      });
  }

  /** The job's PodDisruptionBudget, its NetworkPolicy (its Ray pods reach each other, no other job's), its alerts. */
  private sideObjects(name: string, job: KubeObject, objects: readonly KubeObject[], opts?: ChildOpts): void {
    for (const o of objects) {
      if (o.kind === "PodDisruptionBudget") {
        const child = objectChild(name, job, o, "pdb");
        new k8s.policy.v1.PodDisruptionBudget(
          child.name,
          { metadata: o.metadata, spec: o.spec },
          this.options(child, opts),
        );
      }
      if (o.kind === "NetworkPolicy") {
        const child = objectChild(name, job, o, "networkpolicy");
        new k8s.networking.v1.NetworkPolicy(
          child.name,
          { metadata: o.metadata, spec: o.spec },
          this.options(child, opts),
        );
      }
    }
    // The job's alerts (rendered when the platform has observability): a PrometheusRule, as it is.
    for (const o of objects.filter((k) => k.kind === "PrometheusRule")) {
      const child = objectChild(name, job, o, "prometheusrule");
      new k8s.apiextensions.CustomResource(
        child.name,
        { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec },
        this.options(child, opts),
      );
    }
  }

  /** A child's options: the component's, and its former name as an alias when it had another one. */
  private options(child: ObjectChildName, opts?: ChildOpts): pulumi.CustomResourceOptions {
    const own = childOptions(this, opts);
    return child.formerName === undefined ? own : { ...own, aliases: [{ name: child.formerName }] };
  }

  /** The Secret `<workload>-secrets` with the values of its `secretEnv` variables (secret in Pulumi's state too). */
  private secret(
    name: string,
    job: KubeObject,
    values: Readonly<Record<string, pulumi.Input<string>>>,
    opts?: pulumi.ComponentResourceOptions,
  ): k8s.core.v1.Secret {
    return new k8s.core.v1.Secret(
      `${name}-secrets`,
      {
        metadata: {
          name: workloadSecretName(job.metadata.name),
          namespace: job.metadata.namespace,
          labels: { ...MANAGED_BY },
        },
        type: "Opaque",
        stringData: pulumi.secret(pulumi.output(values) as pulumi.Output<Record<string, string>>),
      },
      { ...childOptions(this, opts), additionalSecretOutputs: ["stringData", "data"] },
    );
  }
}

type ChildOpts = pulumi.ComponentResourceOptions;

/** The resource name of a child made from one rendered object, and the name it had before, if it differs. */
interface ObjectChildName {
  readonly name: string;
  readonly formerName: string | undefined;
}

/**
 * `<component>-<role>-<kind>`, the role being the object's name without the workload's (`llama-ddp-tuning` is the
 * ConfigMap `llama-ddp-tuning-configmap`; the PodDisruptionBudget `llama-ddp` is `llama-ddp-pdb`). Children were named
 * `<component>-<object name>-<kind>` before (`llama-ddp-llama-ddp-tuning-configmap`): that name becomes an alias with
 * the same parent, so `pulumi up` after an upgrade renames them in place. Without it the new name is created first and
 * the old one deleted after, and both are the same `metadata.name`: the delete would take the object away. Pulumi's
 * alias spec: a `name` alone keeps the current parent (pulumi/pulumi sdk/nodejs/resource.ts `Alias`).
 */
function objectChild(component: string, job: KubeObject, o: KubeObject, kind: string): ObjectChildName {
  const workload = job.metadata.name;
  const object = o.metadata.name;
  const role =
    object === workload ? "" : object.startsWith(`${workload}-`) ? object.slice(workload.length + 1) : object;
  const name = role === "" ? `${component}-${kind}` : `${component}-${role}-${kind}`;
  const formerName = `${component}-${object}-${kind}`;
  return { name, formerName: formerName === name ? undefined : formerName };
}

/** Arguments of {@link RayGpuRuntime}. */
export interface RayGpuRuntimeArgs {
  /** Namespace the jobs run in. */
  readonly namespace: string;
  /**
   * The runtime package to ship.
   * @default - this installation's package (`loadRuntimePackage()`)
   */
  readonly runtime?: RuntimePackage;
}

/**
 * The runtime package every RayJob of a namespace mounts: one content-addressed ConfigMap (`ray-gpu-runtime-<hash>`),
 * shared by all jobs there. `RayGpuPlatform` creates it in its workload namespace; create one yourself for jobs on
 * another cluster or namespace, and let the RayWorkloads depend on it.
 */
export class RayGpuRuntime extends pulumi.ComponentResource {
  /** Name of the ConfigMap. */
  public readonly configMapName: string;
  /** The ConfigMap. */
  public readonly configMap: k8s.core.v1.ConfigMap;

  constructor(name: string, args: RayGpuRuntimeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:RayGpuRuntime", name, {}, opts);
    const cm = runtimeConfigMap(args.namespace, args.runtime ?? loadRuntimePackage(), MANAGED_BY);
    this.configMap = new k8s.core.v1.ConfigMap(
      `${name}-configmap`,
      { metadata: cm.metadata, data: cm.data },
      childOptions(this, opts),
    );
    this.configMapName = cm.metadata.name;
    this.registerOutputs({ configMapName: this.configMapName });
  }
}
