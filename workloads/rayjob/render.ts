/**
 * Renders a {@link ClusterShapePlan} as a `ray.io/v1` RayJob, from small named parts: the head pod, the worker pod, the
 * cleanup fields and the contract's volumes. All sizing happened in the plan; this file maps numbers to Kubernetes
 * fields and quantity strings.
 */
import { SHM_PATH, SPILL_PATH, type ClusterShapePlan } from "../../core/cluster/shape";
import type { LifecyclePlan } from "../../core/cluster/shape";
import { STORAGE_CONFIGMAP } from "../../core/platform/storage";
import type { Taint } from "../../core/pools";
import { cpuQuantity, gibQuantity, gibToBytesString } from "../../core/quantity";
import { QUEUE_NAME_LABEL } from "../../core/platform/queueing";
import { RAY_VERSION } from "../../core/ray";
import { storageBucketEnv, type ContractMounts } from "../contract/configmaps";
import { secretEnvVars, type SecretRef } from "../security/secrets";
import { CONTAINER_SECURITY, POD_HARDENING, RAY_AUTH, submitterTemplate } from "../security/pods";
import { knobEnv } from "../contract/document";
import { EVICT_ON_NOTICE_LABEL, noticeParts } from "./preemption";
import type {
  Container,
  EnvVar,
  PodDisruptionBudget,
  PodSpec,
  RayJob,
  RayJobSpec,
  ResourceList,
  Toleration,
  Volume,
  VolumeMount,
} from "../k8s/types";

/** Labels every rendered object carries. */
export const MANAGED_BY = { "app.kubernetes.io/managed-by": "pulumi-ray-gpu" } as const;

/** Input of {@link renderRayJob}. */
export interface RenderRayJobInput {
  readonly name: string;
  readonly namespace: string;
  readonly kind: string;
  readonly environment: string;
  readonly image: string;
  readonly entrypoint: string;
  readonly shape: ClusterShapePlan;
  /** User environment variables; tuned values win on a clash. */
  readonly userEnv?: Readonly<Record<string, string>>;
  /** Secret user variables, rendered as `secretKeyRef`. @default - none */
  readonly secretEnv?: Readonly<Record<string, SecretRef>>;
  /** Service account of the Ray pods (bound to the bucket's IAM role). */
  readonly serviceAccountName: string;
  /** The planner's knobs, handed to the user's code on every Ray container as `RAY_GPU_*` variables. */
  readonly knobs?: object;
  /** The tuning document and the runtime package, mounted on every Ray container. @default - none */
  readonly contract?: ContractMounts;
  /** Ray runtime environment the submitter passes with the job (`runtimeEnvYAML`). @default - none */
  readonly runtimeEnvYAML?: string;
  /**
   * Kueue LocalQueue to submit through: the RayJob is labelled with it and created suspended; Kueue unsuspends it
   * when the queue's quota admits it.
   * @default - none: the job starts at once
   */
  readonly queueName?: string | undefined;
}

/**
 * Annotations of every Ray pod and the submitter: the Cluster Autoscaler never removes a node they run on
 * (kubernetes/autoscaler FAQ, "What types of pods can prevent CA from removing a node?"), so a scale-down never takes
 * a running job's GPU workers, head or submitter.
 */
export const POD_ANNOTATIONS = { "cluster-autoscaler.kubernetes.io/safe-to-evict": "false" } as const;

const toEnv = (vars: Readonly<Record<string, string>>): EnvVar[] =>
  Object.keys(vars)
    .sort()
    .map((name) => ({ name, value: vars[name]! }));

const toToleration = (t: Taint): Toleration => ({ key: t.key, operator: "Equal", value: t.value, effect: t.effect });

const PRE_STOP = { preStop: { exec: { command: ["/bin/sh", "-c", "ray stop"] } } };
const HEAD_PORTS = [
  { name: "gcs-server", containerPort: 6379 },
  { name: "dashboard", containerPort: 8265 },
  { name: "client", containerPort: 10001 },
  { name: "metrics", containerPort: 8080 },
];

/** Requests equal limits: KubeRay reads limits and ignores memory requests. */
function resources(cpus: number, memoryGiB: number, extra: Partial<ResourceList> = {}): Container["resources"] {
  const list: ResourceList = { cpu: cpuQuantity(cpus), memory: gibQuantity(memoryGiB), ...extra };
  return { requests: { ...list }, limits: { ...list } };
}

const shmVolume = (sizeGiB: number): Volume => ({
  name: "dshm",
  emptyDir: { medium: "Memory", sizeLimit: gibQuantity(sizeGiB) },
});
const SHM_MOUNT: VolumeMount = { name: "dshm", mountPath: SHM_PATH };

/** Variables every Ray container gets: the user's, the knobs, and the contract's (tuned values win). */
function commonEnv(input: RenderRayJobInput): Record<string, string> {
  return { ...(input.userEnv ?? {}), ...knobEnv(input.knobs ?? {}), ...(input.contract?.env ?? {}) };
}

/** The head: no GPU (NVIDIA_VISIBLE_DEVICES=void), Ray's ports, on the CPU pool. */
function headPod(input: RenderRayJobInput, env: Record<string, string>): PodSpec {
  const { head } = input.shape;
  const contract = input.contract;
  return {
    containers: [
      {
        name: "ray-head",
        image: input.image,
        resources: resources(head.cpus, head.memoryGiB),
        env: [
          ...toEnv({ ...env, NVIDIA_VISIBLE_DEVICES: "void" }),
          ...secretEnvVars(input.secretEnv ?? {}),
          storageBucketEnv(STORAGE_CONFIGMAP),
        ],
        ports: HEAD_PORTS,
        volumeMounts: [SHM_MOUNT, ...(contract?.mounts ?? [])],
        lifecycle: PRE_STOP,
        securityContext: CONTAINER_SECURITY,
      },
    ],
    volumes: [shmVolume(head.shmGiB), ...(contract?.volumes ?? [])],
    nodeSelector: { ...head.nodeSelector },
    serviceAccountName: input.serviceAccountName,
    ...POD_HARDENING,
  };
}

/**
 * A GPU worker: the node's GPUs, spill on NVMe, the pool's taint tolerated; on spot capacity, the notice's grace
 * period and hook (./preemption).
 */
function workerPod(input: RenderRayJobInput, env: Record<string, string>): PodSpec {
  const { worker } = input.shape;
  const contract = input.contract;
  const notice = worker.spot ? noticeParts() : undefined;
  const gpus: Partial<ResourceList> = {
    "nvidia.com/gpu": String(worker.gpusPerWorker),
    ...(worker.efa ? { "vpc.amazonaws.com/efa": "1" } : {}),
  };
  return {
    containers: [
      {
        name: "ray-worker",
        image: input.image,
        resources: resources(worker.cpus, worker.memoryGiB, gpus),
        env: [
          ...toEnv({ ...env, ...worker.env, ...notice?.env }),
          ...secretEnvVars(input.secretEnv ?? {}),
          storageBucketEnv(STORAGE_CONFIGMAP),
        ],
        volumeMounts: [
          SHM_MOUNT,
          { name: "ray-spill", mountPath: SPILL_PATH },
          ...(notice ? [notice.mount] : []),
          ...(contract?.mounts ?? []),
        ],
        lifecycle: notice?.lifecycle ?? PRE_STOP,
        securityContext: CONTAINER_SECURITY,
      },
    ],
    volumes: [
      shmVolume(worker.shmGiB),
      { name: "ray-spill", emptyDir: { sizeLimit: gibQuantity(worker.spillGiB) } },
      ...(notice ? [notice.volume] : []),
      ...(contract?.volumes ?? []),
    ],
    ...(notice ? { terminationGracePeriodSeconds: notice.terminationGracePeriodSeconds } : {}),
    nodeSelector: { ...worker.nodeSelector },
    tolerations: worker.tolerations.map(toToleration),
    serviceAccountName: input.serviceAccountName,
    ...POD_HARDENING,
  };
}

/** Shutdown with a TTL (dev), or deletion rules per outcome (prod). */
function cleanupFields(
  lifecycle: LifecyclePlan,
): Pick<RayJobSpec, "shutdownAfterJobFinishes" | "ttlSecondsAfterFinished" | "deletionStrategy"> {
  const c = lifecycle.cleanup;
  if (c.mode === "shutdown") return { shutdownAfterJobFinishes: true, ttlSecondsAfterFinished: c.ttlSeconds };
  return {
    deletionStrategy: { deletionRules: c.rules.map((r) => ({ policy: r.policy, condition: { ...r.condition } })) },
  };
}

/** The RayCluster: Ray's token authentication on, a head that runs no work, and one fixed-size worker group. */
function rayClusterSpec(input: RenderRayJobInput, labels: Record<string, string>): RayJobSpec["rayClusterSpec"] {
  const { head, worker } = input.shape;
  const env = commonEnv(input);
  return {
    rayVersion: RAY_VERSION,
    authOptions: { ...RAY_AUTH },
    enableInTreeAutoscaling: false,
    headGroupSpec: {
      rayStartParams: {
        "num-cpus": "0",
        "num-gpus": "0",
        "object-store-memory": gibToBytesString(head.objectStoreGiB),
      },
      template: { metadata: podMetadata(labels), spec: headPod(input, env) },
    },
    workerGroupSpecs: [
      {
        groupName: worker.groupName,
        replicas: worker.replicas,
        minReplicas: worker.replicas,
        maxReplicas: worker.replicas,
        rayStartParams: {
          "object-store-memory": gibToBytesString(worker.objectStoreGiB),
          "object-spilling-directory": SPILL_PATH,
        },
        template: {
          metadata: podMetadata({ ...labels, ...(worker.spot ? noticeParts().labels : {}) }),
          spec: workerPod(input, env),
        },
      },
    ],
  };
}

const podMetadata = (labels: Record<string, string>) => ({
  labels: { ...labels },
  annotations: { ...POD_ANNOTATIONS },
});

/** Label of every object and pod of a workload; the PodDisruptionBudget selects the job's pods by it. */
export const WORKLOAD_LABEL = "ray-gpu.io/workload";

/** Renders the RayJob. */
export function renderRayJob(input: RenderRayJobInput): RayJob {
  const { lifecycle } = input.shape;
  const labels = {
    ...MANAGED_BY,
    [WORKLOAD_LABEL]: input.name,
    "ray-gpu.io/kind": input.kind,
    "ray-gpu.io/environment": input.environment,
  };
  const submitter = submitterTemplate(input.image, labels, input.shape.head.nodeSelector);
  const queue: Record<string, string> = input.queueName ? { [QUEUE_NAME_LABEL]: input.queueName } : {};
  return {
    apiVersion: "ray.io/v1",
    kind: "RayJob",
    metadata: { name: input.name, namespace: input.namespace, labels: { ...labels, ...queue } },
    spec: {
      entrypoint: input.entrypoint,
      ...(input.runtimeEnvYAML ? { runtimeEnvYAML: input.runtimeEnvYAML } : {}),
      // No `suspend`: Kueue's webhook creates a labelled RayJob suspended and unsuspends it on admission. Rendering it
      // would make every refreshed, admitted job differ from its inputs (suspend false → true) and be replaced.
      submissionMode: "K8sJobMode",
      submitterPodTemplate: { ...submitter, metadata: { ...submitter.metadata, annotations: { ...POD_ANNOTATIONS } } },
      backoffLimit: lifecycle.backoffLimit,
      activeDeadlineSeconds: lifecycle.activeDeadlineSeconds,
      preRunningDeadlineSeconds: lifecycle.preRunningDeadlineSeconds,
      ...cleanupFields(lifecycle),
      rayClusterSpec: rayClusterSpec(input, labels),
    },
  };
}

/**
 * The job's PodDisruptionBudget: no voluntary eviction (a drain, a node group update) of its pods while they run. It
 * selects the head, the workers and the submitter and requires all of them (`minAvailable` as a whole number: the
 * form Kubernetes supports for pods whose owner, a RayCluster or a Job, has no scale subresource). Workers on spot
 * capacity are left out ({@link EVICT_ON_NOTICE_LABEL}): a drain on an interruption notice must evict them so their
 * preStop hook checkpoints the step in flight (./preemption); a budget holding them would refuse the eviction until the
 * instance is reclaimed. It outlives the job harmlessly (it selects no pods then). KubeRay's own deletions are not
 * evictions: training survives those by restarting from its last checkpoint.
 */
export function renderDisruptionBudget(job: RayJob): PodDisruptionBudget {
  const name = job.metadata.name;
  const { key, value } = EVICT_ON_NOTICE_LABEL;
  const groups = job.spec.rayClusterSpec.workerGroupSpecs;
  const held = groups.filter((g) => g.template.metadata?.labels?.[key] !== value);
  const workers = held.reduce((n, g) => n + g.replicas, 0);
  const spot = held.length < groups.length;
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name, namespace: job.metadata.namespace, labels: { ...MANAGED_BY, [WORKLOAD_LABEL]: name } },
    spec: {
      minAvailable: 1 + workers + 1,
      selector: {
        matchLabels: { [WORKLOAD_LABEL]: name },
        ...(spot ? { matchExpressions: [{ key, operator: "DoesNotExist" as const }] } : {}),
      },
    },
  };
}
