/**
 * GPU and Ray observability over the plans in `core/observability`: `DcgmExporter` (GPU metrics with pod attribution,
 * on every GPU node), `PrometheusStack` (kube-prometheus-stack on the CPU pool), `RayMonitoring` (the Ray PodMonitor,
 * the stack's rules and the jobs dashboard) and `GpuObservability`, which puts them together with the monitoring
 * namespace (its NetworkPolicies and Grafana's admin Secret), Prometheus's storage and its remote-write role. Each can
 * be used alone.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { Environment } from "../core/config/stack";
import {
  ampRemoteWritePolicy,
  dcgmExporterRelease,
  EBS_CSI,
  MONITORING_NAMESPACE,
  PROMETHEUS_SERVICE_ACCOUNT,
  prometheusStorageClass,
  type ObservabilityPlan,
} from "../core/observability/charts";
import { MANAGED_BY } from "../workloads/k8s/labels";
import { METRICS_SCRAPER_LABEL } from "../workloads/security/namespace";
import { MONITORING_POD_SECURITY_LABELS } from "../core/platform/namespaces";
import { monitoringObjects, rayDashboardConfigMaps } from "../workloads/observability/monitoring";
import { loadRayDashboards, type RayDashboards } from "../io/ray-dashboards";
import type { KubeObject } from "../workloads/k8s/types";
import { helmRelease, type HelmAddonArgs } from "./addons";
import { childOptions } from "./child-options";
import { createRbacGrants } from "./rbac";
import { podIdentityTrust } from "./pod-identity";

/** Arguments of {@link DcgmExporter}. */
export interface DcgmExporterArgs extends HelmAddonArgs {
  /**
   * Namespace of the exporter (the Prometheus that scrapes it must select ServiceMonitors there).
   * @default "monitoring"
   */
  readonly namespace?: string;
}

/**
 * NVIDIA's DCGM exporter (chart 4.8.2) on every GPU node, tolerating the GPU taint; each GPU's series carry the
 * namespace and pod holding it. Needs the Prometheus Operator's CRDs (its ServiceMonitor): depend on a PrometheusStack.
 */
export class DcgmExporter extends pulumi.ComponentResource {
  /** The Helm release. */
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: DcgmExporterArgs = {}, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:DcgmExporter", name, {}, opts);
    const release = args.release ?? dcgmExporterRelease(args.namespace ?? MONITORING_NAMESPACE);
    this.release = helmRelease(name, release, childOptions(this, opts));
    this.registerOutputs({ releaseName: this.release.name });
  }
}

/** Arguments of {@link PrometheusStack}. */
export interface PrometheusStackArgs {
  /** The pinned kube-prometheus-stack chart and its values (`planObservability(...).helm.kubePrometheusStack`). */
  readonly release: ObservabilityPlan["helm"]["kubePrometheusStack"];
  /**
   * The roles of the chart's service accounts (`planObservability(...).rbac`), created before the release. Needed
   * when the release makes no RBAC of its own (`global.rbac.create: false`, as `planObservability` plans it with a
   * workload namespace): without them its operator and its admission hook job could do nothing.
   * @default [] (the chart's own RBAC)
   */
  readonly rbac?: ObservabilityPlan["rbac"];
}

/** Whether a release's values turn the chart's own RBAC off (`global.rbac.create: false`). */
const chartRbacOff = (release: PrometheusStackArgs["release"]) =>
  (release.values as { global?: { rbac?: { create?: unknown } } }).global?.rbac?.create === false;

/** kube-prometheus-stack (chart 88.5.3): the Prometheus Operator and its CRDs, Prometheus, kube-state-metrics, Grafana. */
export class PrometheusStack extends pulumi.ComponentResource {
  /** The Helm release; PodMonitors and PrometheusRules wait for it (it installs their CRDs). */
  public readonly release: k8s.helm.v3.Release;

  constructor(name: string, args: PrometheusStackArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:PrometheusStack", name, {}, opts);
    const rbac = args.rbac ?? [];
    if (chartRbacOff(args.release) && rbac.length === 0)
      throw new pulumi.RunError(
        `PrometheusStack ${name}: its release makes no RBAC of its own (global.rbac.create: false); pass ` +
          "rbac: planObservability(...).rbac, the roles of its service accounts",
      );
    // Its pods and its admission hook jobs run with these roles from the start.
    const grants = createRbacGrants(name, rbac, childOptions(this, opts));
    this.release = helmRelease(name, args.release, childOptions(this, opts, grants));
    this.registerOutputs({ releaseName: this.release.name });
  }
}

/** Arguments of {@link RayMonitoring}. */
export interface RayMonitoringArgs {
  /** Namespace the RayJobs run in. */
  readonly workloadNamespace: string;
  /** The stack's environment: the idle-node alert follows its autoscaler's scale-down time. */
  readonly environment: Environment;
  /** GPU pools with `minNodes` 0, whose idle nodes the autoscaler removes (the idle-node alert watches them). */
  readonly scaleToZeroPools: readonly string[];
  /**
   * Ray's own dashboards to provision beside the jobs dashboard.
   * @default - this installation's, generated from Ray 2.58.0 (`loadRayDashboards()`)
   */
  readonly rayDashboards?: RayDashboards;
}

/**
 * The Ray PodMonitor and the stack's PrometheusRule in the workload namespace, and the dashboards' ConfigMaps (the jobs
 * dashboard and Ray's own default, Ray Data and Ray Train dashboards).
 */
export class RayMonitoring extends pulumi.ComponentResource {
  constructor(name: string, args: RayMonitoringArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:RayMonitoring", name, {}, opts);
    const objects = [
      ...monitoringObjects(args.workloadNamespace, args.environment, args.scaleToZeroPools, MANAGED_BY),
      ...rayDashboardConfigMaps(args.rayDashboards ?? loadRayDashboards(), MANAGED_BY),
    ];
    for (const o of objects) createObject(name, o, childOptions(this, opts));
    this.registerOutputs({});
  }
}

/** A rendered ConfigMap, or a custom resource (PodMonitor, PrometheusRule) as it is. */
export function createObject(prefix: string, o: KubeObject, opts: pulumi.CustomResourceOptions): pulumi.Resource {
  const name = `${prefix}-${o.metadata.name}-${o.kind.toLowerCase()}`;
  if (o.kind === "ConfigMap") return new k8s.core.v1.ConfigMap(name, { metadata: o.metadata, data: o.data }, opts);
  return new k8s.apiextensions.CustomResource(
    name,
    { apiVersion: o.apiVersion, kind: o.kind, metadata: o.metadata, spec: (o as { spec: unknown }).spec },
    opts,
  );
}

/** Arguments of {@link GpuObservability}. */
export interface GpuObservabilityArgs {
  /** `planPlatform(config).observability`. */
  readonly plan: ObservabilityPlan;
  /** EKS cluster (for the EBS CSI add-on and the Pod Identity associations). */
  readonly clusterName: pulumi.Input<string>;
  /** Namespace the RayJobs run in (the PodMonitor and the stack's rules go there). */
  readonly workloadNamespace: string;
  /** The stack's environment: the idle-node alert follows its autoscaler's scale-down time. */
  readonly environment: Environment;
  /** GPU pools with `minNodes` 0 (`plan.pools.gpu`). */
  readonly scaleToZeroPools: readonly string[];
}

/**
 * Everything observability needs on the cluster: the monitoring namespace (labelled so it may scrape Ray pods) with its
 * NetworkPolicies and, when Grafana runs, its admin Secret (a random password), the EBS CSI driver and a gp3
 * StorageClass where the plan names one (clusters the stack creates), Prometheus's remote-write role for Amazon Managed
 * Service for Prometheus, kube-prometheus-stack, the DCGM exporter and the Ray monitoring.
 */
export class GpuObservability extends pulumi.ComponentResource {
  /** kube-prometheus-stack; PrometheusRules and PodMonitors wait for it (it installs their CRDs). */
  public readonly prometheus: PrometheusStack;
  /** The DCGM exporter on the GPU nodes. */
  public readonly dcgmExporter: DcgmExporter;
  /** The Ray PodMonitor, the stack's rules and the dashboards. */
  public readonly rayMonitoring: RayMonitoring;
  /** Grafana's admin password (a Pulumi secret; user `admin`), or undefined when Grafana does not run (remote write). */
  public readonly grafanaAdminPassword: pulumi.Output<string> | undefined;

  constructor(name: string, args: GpuObservabilityArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:GpuObservability", name, {}, opts);
    const { plan } = args;
    const child = childOptions(this, opts);
    const namespace = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      {
        metadata: {
          name: plan.namespace,
          labels: { ...MANAGED_BY, ...METRICS_SCRAPER_LABEL, ...MONITORING_POD_SECURITY_LABELS },
        },
      },
      child,
    );
    const inNamespace = childOptions(this, opts, [namespace]);
    const policies = this.networkPolicies(name, plan, inNamespace);
    const grafana = plan.grafanaAdmin && this.grafanaAdmin(name, plan.grafanaAdmin, plan.namespace, inNamespace);
    this.grafanaAdminPassword = grafana?.password.result;
    const storage = plan.storageClass ? this.storage(name, args.clusterName, child) : [];
    const identity = plan.remoteWrite?.kind === "amp" ? [this.remoteWriteRole(name, args, child)] : [];
    const ready = [namespace, ...policies, ...(grafana ? [grafana.secret] : []), ...storage, ...identity];
    this.prometheus = new PrometheusStack(
      `${name}-prometheus`,
      { release: plan.helm.kubePrometheusStack, rbac: plan.rbac },
      childOptions(this, opts, ready),
    );
    const afterOperator = childOptions(this, opts, [this.prometheus]);
    this.dcgmExporter = new DcgmExporter(`${name}-dcgm-exporter`, { release: plan.helm.dcgmExporter }, afterOperator);
    this.rayMonitoring = new RayMonitoring(
      `${name}-ray`,
      {
        workloadNamespace: args.workloadNamespace,
        environment: args.environment,
        scaleToZeroPools: args.scaleToZeroPools,
      },
      afterOperator,
    );
    this.registerOutputs({});
  }

  /** The monitoring namespace's NetworkPolicies (`core/observability/network.ts`): the release waits for them. */
  private networkPolicies(name: string, plan: ObservabilityPlan, inNamespace: pulumi.CustomResourceOptions) {
    return plan.networkPolicies.map(
      (np) =>
        new k8s.networking.v1.NetworkPolicy(
          `${name}-${np.name}`,
          { metadata: { name: np.name, namespace: plan.namespace, labels: { ...MANAGED_BY } }, spec: np.spec },
          inNamespace,
        ),
    );
  }

  /**
   * Grafana's admin Secret, named in the chart's `grafana.admin.existingSecret`: user `admin` and a random password,
   * a secret in Pulumi's state. The release waits for the Secret.
   */
  private grafanaAdmin(
    name: string,
    admin: NonNullable<ObservabilityPlan["grafanaAdmin"]>,
    namespace: string,
    inNamespace: pulumi.CustomResourceOptions,
  ): { password: random.RandomPassword; secret: k8s.core.v1.Secret } {
    const password = new random.RandomPassword(
      `${name}-grafana-password`,
      { length: 32, special: false },
      { parent: this },
    );
    const secret = new k8s.core.v1.Secret(
      `${name}-grafana-admin`,
      {
        metadata: { name: admin.secretName, namespace, labels: { ...MANAGED_BY } },
        type: "Opaque",
        stringData: { [admin.userKey]: admin.user, [admin.passwordKey]: password.result },
      },
      { ...inNamespace, additionalSecretOutputs: ["stringData", "data"] },
    );
    return { password, secret };
  }

  /** The EBS CSI add-on with its Pod Identity role, and the gp3 StorageClass Prometheus's volume uses. */
  private storage(name: string, clusterName: pulumi.Input<string>, child: pulumi.CustomResourceOptions) {
    const role = new aws.iam.Role(
      `${name}-ebs-csi-role`,
      { assumeRolePolicy: podIdentityTrust(clusterName, EBS_CSI.serviceAccount, this) },
      child,
    );
    new aws.iam.RolePolicyAttachment(
      `${name}-ebs-csi-policy`,
      { role: role.name, policyArn: EBS_CSI.managedPolicyArn },
      child,
    );
    const addon = new aws.eks.Addon(
      `${name}-ebs-csi`,
      {
        clusterName,
        addonName: EBS_CSI.addon,
        resolveConflictsOnCreate: "OVERWRITE",
        podIdentityAssociations: [{ roleArn: role.arn, serviceAccount: EBS_CSI.serviceAccount.name }],
      },
      child,
    );
    const sc = prometheusStorageClass(MANAGED_BY);
    return [addon, new k8s.storage.v1.StorageClass(`${name}-storage-class`, sc, child)];
  }

  /** Prometheus's role for SigV4 remote write to one AMP workspace, bound to its service account. */
  private remoteWriteRole(name: string, args: GpuObservabilityArgs, child: pulumi.CustomResourceOptions) {
    const remote = args.plan.remoteWrite as ObservabilityPlan["remoteWrite"] & { kind: "amp" };
    const serviceAccount = { namespace: args.plan.namespace, name: PROMETHEUS_SERVICE_ACCOUNT };
    const role = new aws.iam.Role(
      `${name}-remote-write-role`,
      { assumeRolePolicy: podIdentityTrust(args.clusterName, serviceAccount, this) },
      child,
    );
    new aws.iam.RolePolicy(
      `${name}-remote-write-policy`,
      { role: role.id, policy: JSON.stringify(ampRemoteWritePolicy(remote)) },
      child,
    );
    return new aws.eks.PodIdentityAssociation(
      `${name}-remote-write-identity`,
      {
        clusterName: args.clusterName,
        namespace: args.plan.namespace,
        serviceAccount: PROMETHEUS_SERVICE_ACCOUNT,
        roleArn: role.arn,
      },
      child,
    );
  }
}
