/**
 * In-cluster add-ons as pinned Helm releases over the plans in `core/platform/addons.ts`: `KubeRayOperator`,
 * `NvidiaDevicePlugin`, `EfaDevicePlugin` and `ClusterAutoscaler` (with its own least-privilege EKS Pod Identity role).
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { podIdentityTrust } from "./pod-identity";
import type { Environment } from "../core/config/stack";
import {
  CLUSTER_AUTOSCALER_IMAGES,
  clusterAutoscalerImageTag,
  clusterAutoscalerPolicy,
  clusterAutoscalerRelease,
  efaDevicePluginRelease,
  kuberayOperatorRelease,
  nvidiaDevicePluginRelease,
  SERVICE_ACCOUNTS,
  type HelmReleasePlan,
} from "../core/platform/addons";
import { sortKeys } from "../core/serialize";
import type { SpotFallbackPlan } from "../core/platform/spot-fallback";
import { childOptions, nameChecks, withOrdering, type OrderingSource } from "./child-options";

/**
 * Arguments of a Helm add-on. Its Kubernetes provider and what it waits for come from `platform`, or through the
 * resource options on a cluster you run yourself.
 */
export interface HelmAddonArgs {
  /**
   * The platform the add-on runs on: its Kubernetes provider, and the cluster, the CPU nodes and CoreDNS the release's
   * pods need (`platform.addonOptions()`), added to the resource options. Without it, a release given only
   * `{ provider }` on a cluster the same program makes is created before any node can run its pods.
   * @default - none: the provider and what to wait for come through the resource options
   */
  readonly platform?: Pick<OrderingSource, "addonOptions">;
  /**
   * The pinned chart and the values to install.
   * @default - the add-on's own plan (`kuberayOperatorRelease()`, `nvidiaDevicePluginRelease()`)
   */
  readonly release?: HelmReleasePlan;
}

/** The pinned chart with `values` (default: the plan's), keys sorted so previews show value changes only. */
export function helmRelease(
  name: string,
  release: HelmReleasePlan,
  opts: pulumi.CustomResourceOptions,
  values: pulumi.Input<Record<string, unknown>> = sortKeys(release.values) as Record<string, unknown>,
): k8s.helm.v3.Release {
  // An OCI registry is named in the chart reference itself; a classic repository goes to repositoryOpts.
  const oci = release.repo.startsWith("oci://");
  return new k8s.helm.v3.Release(
    `${name}-release`,
    {
      chart: oci ? `${release.repo}/${release.chart}` : release.chart,
      version: release.version,
      ...(oci ? {} : { repositoryOpts: { repo: release.repo } }),
      namespace: release.namespace,
      createNamespace: true,
      values,
      atomic: true,
    },
    opts,
  );
}

/** Arguments of {@link KubeRayOperator}. */
export interface KubeRayOperatorArgs extends HelmAddonArgs {
  /**
   * CPU pool to run the operator on (`ray-gpu.io/pool=<name>`); leave it out on clusters whose nodes lack that label.
   * @default - any node
   */
  readonly cpuPool?: string;
  /**
   * The namespaces whose RayJobs the operator reconciles: a single-namespace install, with a Role in each (Pods,
   * Services, Secrets there only) instead of a ClusterRole over every namespace. Each must exist before the release:
   * pass the Namespace resources in `dependsOn`.
   * @default - every namespace: the chart's ClusterRole, which reads every Secret of the cluster
   */
  readonly watchNamespaces?: readonly string[];
}

/**
 * The KubeRay operator (chart 1.7.0) with its CRDs; RayJobs depend on it. On a platform,
 * `new KubeRayOperator("kuberay", { platform })` takes the provider and the order from it; on a cluster the program
 * does not make, give the provider in the resource options: `new KubeRayOperator("kuberay", {}, { provider })`.
 */
export class KubeRayOperator extends pulumi.ComponentResource {
  /** The Helm release; pass the operator (or this release) to a RayWorkload's `dependsOn`. */
  public readonly release: k8s.helm.v3.Release;
  /** Namespace the operator runs in. */
  public readonly namespace: string;

  constructor(name: string, args: KubeRayOperatorArgs = {}, opts?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(withOrdering(args.platform?.addonOptions(), opts));
    super("ray-gpu:index:KubeRayOperator", name, {}, names.opts);
    names.own(this);
    const release = args.release ?? kuberayOperatorRelease(args.cpuPool, args.watchNamespaces);
    this.release = helmRelease(name, release, childOptions(this, names.opts));
    this.namespace = release.namespace;
    names.report(`KubeRayOperator ${name}`);
    this.registerOutputs({ releaseName: this.release.name });
  }
}

/** The NVIDIA device plugin on GPU nodes (the AL2023 NVIDIA AMI has the driver, not the plugin). */
export class NvidiaDevicePlugin extends pulumi.ComponentResource {
  /** The Helm release. */
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: HelmAddonArgs = {}, opts?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(withOrdering(args.platform?.addonOptions(), opts));
    super("ray-gpu:index:NvidiaDevicePlugin", name, {}, names.opts);
    names.own(this);
    this.release = helmRelease(name, args.release ?? nvidiaDevicePluginRelease(), childOptions(this, names.opts));
    names.report(`NvidiaDevicePlugin ${name}`);
    this.registerOutputs({ releaseName: this.release.name });
  }
}

/**
 * The EFA device plugin (aws/eks-charts `aws-efa-k8s-device-plugin`): advertises each EFA node's interfaces as
 * `vpc.amazonaws.com/efa`, which the workers of a job that crosses nodes over EFA request.
 */
export class EfaDevicePlugin extends pulumi.ComponentResource {
  /** The Helm release. */
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: HelmAddonArgs = {}, opts?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(withOrdering(args.platform?.addonOptions(), opts));
    super("ray-gpu:index:EfaDevicePlugin", name, {}, names.opts);
    names.own(this);
    this.release = helmRelease(name, args.release ?? efaDevicePluginRelease(), childOptions(this, names.opts));
    names.report(`EfaDevicePlugin ${name}`);
    this.registerOutputs({ releaseName: this.release.name });
  }
}

/** Arguments of {@link ClusterAutoscaler}. */
export interface ClusterAutoscalerArgs {
  /** EKS cluster whose tagged node groups the autoscaler scales. */
  readonly clusterName: pulumi.Input<string>;
  /** AWS region of the cluster. */
  readonly region: string;
  /** Environment profile: how long nodes stay unneeded before they go. */
  readonly environment: Environment;
  /**
   * CPU pool to run the autoscaler on (`ray-gpu.io/pool=<name>`).
   * @default - any node
   */
  readonly cpuPool?: string;
  /**
   * The cluster's Kubernetes minor (`EksCluster.kubernetesVersion`): the image is the autoscaler release of that minor
   * (`CLUSTER_AUTOSCALER_IMAGES`). A minor with no pinned release keeps the chart's image, with a warning.
   * @default - unknown: the chart's image, with a warning
   */
  readonly kubernetesVersion?: pulumi.Input<string | undefined>;
  /**
   * The stack's spot-with-fallback pools (`PlatformPlan.spotFallback`): the autoscaler prefers their spot groups and
   * gives up on a spot node after their wait.
   * @default - none: least-waste expander, 15-minute provision time
   */
  readonly spotFallback?: SpotFallbackPlan | undefined;
  /**
   * The platform it runs on: its provider, and the nodes and CoreDNS its pods need (`platform.addonOptions()`).
   * @default - none: they come through the resource options
   */
  readonly platform?: Pick<OrderingSource, "addonOptions">;
}

/** Cluster Autoscaler with its own role, bound to its service account through EKS Pod Identity. */
export class ClusterAutoscaler extends pulumi.ComponentResource {
  /** The Helm release. */
  public readonly release: k8s.helm.v3.Release;
  /** The autoscaler's IAM role. */
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: ClusterAutoscalerArgs, options?: pulumi.ComponentResourceOptions) {
    const names = nameChecks(withOrdering(args.platform?.addonOptions(), options));
    const opts = names.opts;
    super("ray-gpu:index:ClusterAutoscaler", name, {}, opts);
    names.own(this);
    const child = { parent: this };
    const clusterName = pulumi.output(args.clusterName);
    const account = SERVICE_ACCOUNTS.clusterAutoscaler;
    const role = new aws.iam.Role(
      `${name}-role`,
      { assumeRolePolicy: podIdentityTrust(args.clusterName, account, this) },
      child,
    );
    const policy = clusterName.apply((c) => JSON.stringify(clusterAutoscalerPolicy(c)));
    new aws.iam.RolePolicy(`${name}-policy`, { role: role.id, policy }, child);
    const { namespace, name: serviceAccount } = account;
    const identity = { clusterName: args.clusterName, namespace, serviceAccount, roleArn: role.arn };
    const association = new aws.eks.PodIdentityAssociation(`${name}-identity`, identity, child);
    const release = (c: string, v?: string) =>
      clusterAutoscalerRelease({ ...args, clusterName: c, cpuPool: args.cpuPool, kubernetesVersion: v });
    // Chart, version and namespace do not depend on the cluster; only the values do.
    const values = pulumi.all([clusterName, args.kubernetesVersion]).apply(([c, v]) => {
      if (!clusterAutoscalerImageTag(v))
        pulumi.log.warn(
          `no Cluster Autoscaler release is pinned for Kubernetes ${v ?? "(unknown)"}: the chart's default image runs, ` +
            `which may not match the cluster's minor; pinned minors: ${Object.keys(CLUSTER_AUTOSCALER_IMAGES).join(", ")}`,
          this,
        );
      return sortKeys(release(c, v).values) as Record<string, unknown>;
    });
    this.release = helmRelease(name, release(""), childOptions(this, opts, [association]), values);
    this.roleArn = role.arn;
    names.report(`ClusterAutoscaler ${name}`);
    this.registerOutputs({ releaseName: this.release.name, roleArn: this.roleArn });
  }
}
