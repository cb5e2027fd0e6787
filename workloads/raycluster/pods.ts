/**
 * The Ray cluster's pods: the head (no GPU, Ray's ports, on the CPU pool) and a GPU worker (spill on NVMe, the pool's
 * taint tolerated, the spot notice hook). All sizing happened in the plan; this file maps numbers to Kubernetes fields
 * and quantity strings.
 */
import { SHM_PATH, SPILL_PATH } from "../../core/cluster/shape";
import { STORAGE_CONFIGMAP } from "../../core/platform/storage";
import type { Taint } from "../../core/pools";
import { EFA_RESOURCE, HUGEPAGES_2MI_RESOURCE } from "../../core/catalog/efa";
import { cpuQuantity, gibQuantity } from "../../core/quantity";
import { storageBucketEnv } from "../contract/configmaps";
import { knobEnv } from "../contract/document";
import type { Container, EnvVar, PodSpec, ResourceList, Toleration, Volume, VolumeMount } from "../k8s/types";
import { secretEnvVars } from "../security/secrets";
import { CONTAINER_SECURITY, POD_HARDENING } from "../security/pods";
import type { RayClusterInput } from "./input";
import { noticeParts } from "./preemption";

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
export function commonEnv(input: RayClusterInput): Record<string, string> {
  return { ...(input.userEnv ?? {}), ...knobEnv(input.knobs ?? {}), ...(input.contract?.env ?? {}) };
}

/** The head: no GPU (NVIDIA_VISIBLE_DEVICES=void), Ray's ports, on the CPU pool. */
export function headPod(input: RayClusterInput, env: Record<string, string>): PodSpec {
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

/** What a worker crossing nodes over EFA requests: its node's interfaces and hugepages (requests equal limits). */
const efaResources = (efa: RayClusterInput["shape"]["worker"]["efa"]): Partial<ResourceList> =>
  efa ? { [EFA_RESOURCE]: String(efa.interfaces), [HUGEPAGES_2MI_RESOURCE]: `${efa.hugepagesMiB}Mi` } : {};

/**
 * A GPU worker: the node's GPUs, spill on NVMe, the pool's taint tolerated; on spot capacity, the notice's grace
 * period and hook (./preemption).
 */
export function workerPod(input: RayClusterInput, env: Record<string, string>): PodSpec {
  const { worker } = input.shape;
  const contract = input.contract;
  const notice = worker.spot ? noticeParts() : undefined;
  const gpus: Partial<ResourceList> = { "nvidia.com/gpu": String(worker.gpusPerWorker), ...efaResources(worker.efa) };
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
