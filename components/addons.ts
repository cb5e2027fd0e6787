/**
 * In-cluster add-ons as pinned Helm releases over the plans in `core/platform/addons.ts`: `KubeRayOperator`,
 * `NvidiaDevicePlugin` and `ClusterAutoscaler` (with its own least-privilege EKS Pod Identity role).
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { clusterAutoscalerPolicy, SERVICE_ACCOUNTS, type HelmReleasePlan } from "../core/platform/addons";
import { podIdentityTrustPolicy } from "../core/platform/iam";
import { sortKeys } from "../core/serialize";

export interface HelmAddonArgs {
  /** From `kuberayOperatorRelease(...)`, `nvidiaDevicePluginRelease()` or `clusterAutoscalerRelease(...)`. */
  readonly release: HelmReleasePlan;
  readonly provider: k8s.Provider;
  /** What the release waits for (node groups, managed add-ons). @default [] */
  readonly dependsOn?: pulumi.Input<pulumi.Resource>[];
}

function helmRelease(name: string, args: HelmAddonArgs, parent: pulumi.ComponentResource): k8s.helm.v3.Release {
  const r = args.release;
  return new k8s.helm.v3.Release(
    `${name}-release`,
    {
      chart: r.chart,
      version: r.version,
      repositoryOpts: { repo: r.repo },
      namespace: r.namespace,
      createNamespace: true,
      // Sorted keys: previews show value changes only.
      values: sortKeys(r.values) as Record<string, unknown>,
      atomic: true,
    },
    { parent, provider: args.provider, dependsOn: args.dependsOn ?? [] },
  );
}

/** The KubeRay operator (chart 1.7.0) with its CRDs; RayJobs depend on it. */
export class KubeRayOperator extends pulumi.ComponentResource {
  /** The Helm release; pass it to `RayWorkload`'s `dependsOn`. */
  public readonly release: k8s.helm.v3.Release;
  public readonly namespace: string;

  constructor(name: string, args: HelmAddonArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:KubeRayOperator", name, {}, opts);
    this.release = helmRelease(name, args, this);
    this.namespace = args.release.namespace;
    this.registerOutputs({ releaseName: this.release.name });
  }
}

/** The NVIDIA device plugin on GPU nodes (the AL2023 NVIDIA AMI has the driver, not the plugin). */
export class NvidiaDevicePlugin extends pulumi.ComponentResource {
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: HelmAddonArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:NvidiaDevicePlugin", name, {}, opts);
    this.release = helmRelease(name, args, this);
    this.registerOutputs({ releaseName: this.release.name });
  }
}

export interface ClusterAutoscalerArgs extends HelmAddonArgs {
  readonly clusterName: pulumi.Input<string>;
  /** The cluster name as planned (for the IAM condition on its Auto Scaling groups). */
  readonly plannedClusterName: string;
}

/** Cluster Autoscaler with its own role, bound to its service account through EKS Pod Identity. */
export class ClusterAutoscaler extends pulumi.ComponentResource {
  public readonly release: k8s.helm.v3.Release;
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: ClusterAutoscalerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:ClusterAutoscaler", name, {}, opts);
    const child = { parent: this };
    const role = new aws.iam.Role(
      `${name}-role`,
      { assumeRolePolicy: JSON.stringify(podIdentityTrustPolicy()) },
      child,
    );
    new aws.iam.RolePolicy(
      `${name}-policy`,
      { role: role.id, policy: JSON.stringify(clusterAutoscalerPolicy(args.plannedClusterName)) },
      child,
    );
    const association = new aws.eks.PodIdentityAssociation(
      `${name}-identity`,
      {
        clusterName: args.clusterName,
        namespace: SERVICE_ACCOUNTS.clusterAutoscaler.namespace,
        serviceAccount: SERVICE_ACCOUNTS.clusterAutoscaler.name,
        roleArn: role.arn,
      },
      child,
    );
    this.release = helmRelease(name, { ...args, dependsOn: [...(args.dependsOn ?? []), association] }, this);
    this.roleArn = role.arn;
    this.registerOutputs({ releaseName: this.release.name, roleArn: this.roleArn });
  }
}
