/**
 * Hand-written types for the subset of `ray.io/v1` RayJob (KubeRay v1.7.0) and Kubernetes core/v1 that we emit.
 * The full CRD is 1.4 MB; tests check every emitted object against it.
 */
import type { RuleGroup } from "../../core/observability/rules";

export interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface ResourceList {
  cpu: string;
  memory: string;
  "nvidia.com/gpu"?: string;
  "vpc.amazonaws.com/efa"?: string;
  "hugepages-2Mi"?: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?:
    | { configMapKeyRef: { name: string; key: string; optional?: boolean } }
    | { secretKeyRef: { name: string; key: string; optional?: boolean } };
}

/** Pod-level security settings (the subset we set). */
export interface PodSecurityContext {
  runAsNonRoot: boolean;
  runAsUser: number;
  runAsGroup: number;
  fsGroup: number;
  seccompProfile: { type: "RuntimeDefault" };
}

/** Container-level security settings (the subset we set). */
export interface SecurityContext {
  allowPrivilegeEscalation: boolean;
  capabilities: { drop: string[] };
  runAsNonRoot: boolean;
  seccompProfile: { type: "RuntimeDefault" };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: "Memory"; sizeLimit?: string };
  configMap?: { name: string; items?: { key: string; path: string }[] };
}

export interface ContainerPort {
  name: string;
  containerPort: number;
}

export interface Container {
  name: string;
  image: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  resources: { requests: ResourceList; limits: ResourceList };
  env?: EnvVar[];
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  lifecycle?: { preStop: { exec: { command: string[] } } };
  securityContext?: SecurityContext;
}

export interface Toleration {
  key: string;
  operator: "Equal" | "Exists";
  value?: string;
  effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  securityContext?: PodSecurityContext;
  restartPolicy?: "Never" | "OnFailure";
  terminationGracePeriodSeconds?: number;
}

export interface PodTemplateSpec {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec;
}

/** `rayStartParams`: every value is a string. */
export type RayStartParams = Record<string, string>;

export interface HeadGroupSpec {
  rayStartParams: RayStartParams;
  template: PodTemplateSpec;
  serviceType?: "ClusterIP";
}

export interface WorkerGroupSpec {
  groupName: string;
  replicas: number;
  minReplicas: number;
  maxReplicas: number;
  rayStartParams: RayStartParams;
  template: PodTemplateSpec;
}

export interface RayClusterSpec {
  rayVersion: string;
  /** Ray's token authentication: KubeRay puts the Secret's `auth_token` into every Ray container and the submitter. */
  authOptions?: { mode: "token"; secretName?: string };
  enableInTreeAutoscaling?: boolean;
  headGroupSpec: HeadGroupSpec;
  workerGroupSpecs: WorkerGroupSpec[];
}

export interface DeletionRuleSpec {
  policy: "DeleteCluster" | "DeleteWorkers" | "DeleteSelf" | "DeleteNone";
  condition: { jobStatus?: "SUCCEEDED" | "FAILED"; jobDeploymentStatus?: "Failed"; ttlSeconds?: number };
}

export interface RayJobSpec {
  entrypoint: string;
  /** Ray runtime environment (YAML) the submitter passes with the job. */
  runtimeEnvYAML?: string;
  rayClusterSpec: RayClusterSpec;
  submissionMode: "K8sJobMode" | "HTTPMode" | "InteractiveMode" | "SidecarMode";
  shutdownAfterJobFinishes?: boolean;
  ttlSecondsAfterFinished?: number;
  deletionStrategy?: { deletionRules: DeletionRuleSpec[] };
  submitterPodTemplate?: PodTemplateSpec;
  backoffLimit: number;
  activeDeadlineSeconds: number;
  preRunningDeadlineSeconds: number;
  suspend?: boolean;
}

/** A `ray.io/v1` RayJob (the subset of KubeRay v1.7.0's fields the workloads emit). */
export interface RayJob {
  apiVersion: "ray.io/v1";
  kind: "RayJob";
  metadata: ObjectMeta;
  spec: RayJobSpec;
}

/** A core/v1 ConfigMap (tuning files handed to user code). */
export interface ConfigMap {
  apiVersion: "v1";
  kind: "ConfigMap";
  metadata: ObjectMeta;
  data: Record<string, string>;
}

/** A peer of a NetworkPolicy rule: pods (by labels, optionally in other namespaces) or an IP block. */
export interface NetworkPolicyPeer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}

/** One allow rule of a NetworkPolicy: from/to these peers on these ports (all ports when absent). */
export interface NetworkPolicyRule {
  peers?: NetworkPolicyPeer[];
  ports?: { protocol: "TCP" | "UDP"; port: number }[];
}

/** A networking.k8s.io/v1 NetworkPolicy. */
export interface NetworkPolicy {
  apiVersion: "networking.k8s.io/v1";
  kind: "NetworkPolicy";
  metadata: ObjectMeta;
  spec: {
    podSelector: { matchLabels?: Record<string, string> };
    policyTypes: ("Ingress" | "Egress")[];
    ingress?: { from?: NetworkPolicyPeer[]; ports?: NetworkPolicyRule["ports"] }[];
    egress?: { to?: NetworkPolicyPeer[]; ports?: NetworkPolicyRule["ports"] }[];
  };
}

/** A metav1.LabelSelector: labels and set-based expressions, all of which must match. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

/** A policy/v1 PodDisruptionBudget. */
export interface PodDisruptionBudget {
  apiVersion: "policy/v1";
  kind: "PodDisruptionBudget";
  metadata: ObjectMeta;
  spec: { minAvailable: number; selector: LabelSelector };
}

/** A Kueue (v1beta2) ResourceFlavor: a pool, by its node label. Cluster-scoped. */
export interface ResourceFlavor {
  apiVersion: "kueue.x-k8s.io/v1beta2";
  kind: "ResourceFlavor";
  metadata: ObjectMeta;
  spec: { nodeLabels: Record<string, string> };
}

/** A Kueue (v1beta2) ClusterQueue. Cluster-scoped. */
export interface ClusterQueue {
  apiVersion: "kueue.x-k8s.io/v1beta2";
  kind: "ClusterQueue";
  metadata: ObjectMeta;
  spec: {
    namespaceSelector: { matchLabels: Record<string, string> };
    queueingStrategy: "BestEffortFIFO" | "StrictFIFO";
    resourceGroups: {
      coveredResources: string[];
      flavors: { name: string; resources: { name: string; nominalQuota: string }[] }[];
    }[];
  };
}

/** A Kueue (v1beta2) LocalQueue: where a namespace's jobs are submitted. */
export interface LocalQueue {
  apiVersion: "kueue.x-k8s.io/v1beta2";
  kind: "LocalQueue";
  metadata: ObjectMeta;
  spec: { clusterQueue: string };
}

/** A Prometheus Operator (monitoring.coreos.com/v1) PodMonitor: which pods Prometheus scrapes, and how. */
export interface PodMonitor {
  apiVersion: "monitoring.coreos.com/v1";
  kind: "PodMonitor";
  metadata: ObjectMeta;
  spec: {
    selector: LabelSelector;
    podMetricsEndpoints: {
      port: string;
      path: string;
      interval: string;
      relabelings: { sourceLabels: string[]; targetLabel: string; action: "replace" }[];
    }[];
  };
}

/** A Prometheus Operator (monitoring.coreos.com/v1) PrometheusRule: recording and alerting rule groups. */
export interface PrometheusRule {
  apiVersion: "monitoring.coreos.com/v1";
  kind: "PrometheusRule";
  metadata: ObjectMeta;
  spec: { groups: RuleGroup[] };
}

/** Any Kubernetes object a stack renders. */
export type KubeObject =
  | RayJob
  | ConfigMap
  | NetworkPolicy
  | PodDisruptionBudget
  | ResourceFlavor
  | ClusterQueue
  | LocalQueue
  | PodMonitor
  | PrometheusRule;
