/**
 * `RayWorkload`: applies a workload's rendered objects (a `ray.io/v1` RayJob and the ConfigMaps it mounts) as
 * Kubernetes resources. Thin: the objects come fully planned and checked from `workloads/`.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { KubeObject } from "../workloads/k8s/types";

/** Arguments of {@link RayWorkload}. */
export interface RayWorkloadArgs {
  /** Objects rendered by a workload construct (e.g. `new TrainingJob(spec).render(ctx)`). */
  readonly objects: readonly KubeObject[];
  /**
   * Kubernetes provider of the target cluster.
   * @default - the ambient provider (kubeconfig of the environment)
   */
  readonly provider?: k8s.Provider;
  /**
   * Resources the RayJob must wait for, typically the KubeRay operator's Helm release (its CRDs).
   * @default []
   */
  readonly dependsOn?: pulumi.Input<pulumi.Resource>[];
}

/** One workload on the cluster. */
export class RayWorkload extends pulumi.ComponentResource {
  /** Name of the RayJob. */
  public readonly rayJobName: pulumi.Output<string>;

  constructor(name: string, args: RayWorkloadArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:RayWorkload", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const configMaps = args.objects
      .filter((o) => o.kind === "ConfigMap")
      .map(
        (o) =>
          new k8s.core.v1.ConfigMap(
            `${name}-${o.metadata.name}-configmap`,
            { metadata: o.metadata, data: o.data },
            child,
          ),
      );
    const rayJobs = args.objects
      .filter((o) => o.kind === "RayJob")
      .map(
        (o) =>
          new k8s.apiextensions.CustomResource(
            `${name}-rayjob`,
            { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec },
            // KubeRay does not act on spec changes to a submitted RayJob: replace it so a change re-runs the job.
            {
              ...child,
              dependsOn: [...(args.dependsOn ?? []), ...configMaps],
              replaceOnChanges: ["spec"],
              deleteBeforeReplace: true,
            },
          ),
      );
    if (rayJobs.length !== 1) throw new Error(`RayWorkload ${name} needs exactly one RayJob, got ${rayJobs.length}`);
    this.rayJobName = rayJobs[0]!.metadata.apply((m) => m.name ?? name);
    this.registerOutputs({ rayJobName: this.rayJobName });
  }
}
