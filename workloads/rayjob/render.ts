/**
 * Renders a {@link ClusterShapePlan} as a `ray.io/v1` RayJob. All sizing happened in the plan; this file only
 * maps numbers to Kubernetes fields and quantity strings.
 */
import { cpuQuantity, gibQuantity, gibToBytesString } from "../../core/quantity";
import { SHM_PATH, SPILL_PATH, type ClusterShapePlan } from "../../core/cluster/shape";
import type { Taint } from "../../core/pools";
import type { Container, EnvVar, PodSpec, RayJob, ResourceList, Toleration, Volume, VolumeMount } from "./types";
import { STORAGE_CONFIGMAP, TUNING_FILE, TUNING_MOUNT_PATH } from "../tuning/file";
import { RUNTIME_MOUNT, RUNTIME_PYTHONPATH } from "../tuning/runtime";
import { RAY_VERSION } from "../../core/ray";

/** Ray version we test against; the RayCluster's `rayVersion`, to match the image. */
export { RAY_VERSION };

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
  /** Service account of the Ray pods (bound to the bucket's IAM role). */
  readonly serviceAccountName: string;
  /** The planner's knobs, handed to the user's code on every Ray container (see {@link knobEnv}). */
  readonly knobs?: Readonly<Record<string, string | number | boolean>>;
  /** ConfigMap with the tuning document, mounted at /etc/ray-gpu on every Ray container. */
  readonly tuningConfigMap?: string;
  /** Volume with the runtime package (see `runtimeVolume`), mounted on every Ray container and put on PYTHONPATH. */
  readonly runtimeVolume?: Volume;
  /** Ray runtime environment the submitter passes with the job (`runtimeEnvYAML`). @default - none */
  readonly runtimeEnvYAML?: string;
}

/**
 * The planner's knobs as environment variables: `microBatchSize` becomes `RAY_GPU_MICRO_BATCH_SIZE`. Set on the
 * head (where the driver runs) and on every worker.
 */
export function knobEnv(knobs: Readonly<Record<string, string | number | boolean>>): Record<string, string> {
  return Object.fromEntries(Object.entries(knobs).map(([k, v]) => [`RAY_GPU_${k.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`, String(v)]));
}

const toEnv = (vars: Readonly<Record<string, string>>): EnvVar[] =>
  Object.keys(vars)
    .sort()
    .map((name) => ({ name, value: vars[name]! }));

const toToleration = (t: Taint): Toleration => ({ key: t.key, operator: "Equal", value: t.value, effect: t.effect });

const PRE_STOP = { preStop: { exec: { command: ["/bin/sh", "-c", "ray stop"] } } };

function resources(cpus: number, memoryGiB: number, extra: Partial<ResourceList> = {}): Container["resources"] {
  const list: ResourceList = { cpu: cpuQuantity(cpus), memory: gibQuantity(memoryGiB), ...extra };
  return { requests: { ...list }, limits: { ...list } };
}

function shmVolume(sizeGiB: number) {
  return { name: "dshm", emptyDir: { medium: "Memory" as const, sizeLimit: gibQuantity(sizeGiB) } };
}

/** Renders the RayJob. */
export function renderRayJob(input: RenderRayJobInput): RayJob {
  const { shape } = input;
  const { head, worker, lifecycle } = shape;
  const labels = {
    ...MANAGED_BY,
    "ray-gpu.io/workload": input.name,
    "ray-gpu.io/kind": input.kind,
    "ray-gpu.io/environment": input.environment,
  };
  const userEnv = {
    ...(input.userEnv ?? {}),
    ...knobEnv(input.knobs ?? {}),
    ...(input.tuningConfigMap ? { RAY_GPU_TUNING_FILE: `${TUNING_MOUNT_PATH}/${TUNING_FILE}` } : {}),
    // The user's PYTHONPATH first, then the runtime package.
    ...(input.runtimeVolume ? { PYTHONPATH: [input.userEnv?.["PYTHONPATH"], RUNTIME_PYTHONPATH].filter(Boolean).join(":") } : {}),
  };
  // The bucket is known only once the platform exists: read it from the platform's ConfigMap (optional, so a
  // job also starts on a cluster without it).
  const storageEnv: EnvVar = { name: "RAY_GPU_STORAGE_BUCKET", valueFrom: { configMapKeyRef: { name: STORAGE_CONFIGMAP, key: "bucket", optional: true } } };
  const tuningVolume: Volume[] = [
    ...(input.tuningConfigMap ? [{ name: "ray-gpu-tuning", configMap: { name: input.tuningConfigMap } }] : []),
    ...(input.runtimeVolume ? [input.runtimeVolume] : []),
  ];
  const tuningMount: VolumeMount[] = [
    ...(input.tuningConfigMap ? [{ name: "ray-gpu-tuning", mountPath: TUNING_MOUNT_PATH, readOnly: true }] : []),
    ...(input.runtimeVolume ? [{ ...RUNTIME_MOUNT }] : []),
  ];

  const headMounts: VolumeMount[] = [{ name: "dshm", mountPath: SHM_PATH }];
  const headPod: PodSpec = {
    containers: [
      {
        name: "ray-head",
        image: input.image,
        resources: resources(head.cpus, head.memoryGiB),
        env: [...toEnv({ ...userEnv, NVIDIA_VISIBLE_DEVICES: "void" }), storageEnv],
        ports: [
          { name: "gcs-server", containerPort: 6379 },
          { name: "dashboard", containerPort: 8265 },
          { name: "client", containerPort: 10001 },
          { name: "metrics", containerPort: 8080 },
        ],
        volumeMounts: [...headMounts, ...tuningMount],
        lifecycle: PRE_STOP,
      },
    ],
    volumes: [shmVolume(head.shmGiB), ...tuningVolume],
    nodeSelector: { ...head.nodeSelector },
    serviceAccountName: input.serviceAccountName,
  };

  const gpuExtra: Partial<ResourceList> = { "nvidia.com/gpu": String(worker.gpusPerWorker) };
  if (worker.efa) gpuExtra["vpc.amazonaws.com/efa"] = "1";
  const workerPod: PodSpec = {
    containers: [
      {
        name: "ray-worker",
        image: input.image,
        resources: resources(worker.cpus, worker.memoryGiB, gpuExtra),
        env: [...toEnv({ ...userEnv, ...worker.env }), storageEnv],
        volumeMounts: [{ name: "dshm", mountPath: SHM_PATH }, { name: "ray-spill", mountPath: SPILL_PATH }, ...tuningMount],
        lifecycle: PRE_STOP,
      },
    ],
    volumes: [shmVolume(worker.shmGiB), { name: "ray-spill", emptyDir: { sizeLimit: gibQuantity(worker.spillGiB) } }, ...tuningVolume],
    nodeSelector: { ...worker.nodeSelector },
    tolerations: worker.tolerations.map(toToleration),
    serviceAccountName: input.serviceAccountName,
  };

  const cleanup =
    lifecycle.cleanup.mode === "shutdown"
      ? { shutdownAfterJobFinishes: true, ttlSecondsAfterFinished: lifecycle.cleanup.ttlSeconds }
      : {
          deletionStrategy: {
            deletionRules: lifecycle.cleanup.rules.map((r) => ({ policy: r.policy, condition: { ...r.condition } })),
          },
        };

  return {
    apiVersion: "ray.io/v1",
    kind: "RayJob",
    metadata: { name: input.name, namespace: input.namespace, labels },
    spec: {
      entrypoint: input.entrypoint,
      ...(input.runtimeEnvYAML ? { runtimeEnvYAML: input.runtimeEnvYAML } : {}),
      submissionMode: "K8sJobMode",
      backoffLimit: lifecycle.backoffLimit,
      activeDeadlineSeconds: lifecycle.activeDeadlineSeconds,
      preRunningDeadlineSeconds: lifecycle.preRunningDeadlineSeconds,
      ...cleanup,
      rayClusterSpec: {
        rayVersion: RAY_VERSION,
        enableInTreeAutoscaling: false,
        headGroupSpec: {
          rayStartParams: {
            "num-cpus": "0",
            "num-gpus": "0",
            "object-store-memory": gibToBytesString(head.objectStoreGiB),
          },
          template: { metadata: { labels: { ...labels } }, spec: headPod },
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
            template: { metadata: { labels: { ...labels } }, spec: workerPod },
          },
        ],
      },
    },
  };
}
