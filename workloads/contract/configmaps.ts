/**
 * How the contract reaches a job: the job's tuning ConfigMap (`tuning.json`, and `deepspeed.json` under ZeRO) mounted at
 * `/etc/ray-gpu`, and the runtime package `ray_gpu`, one content-addressed ConfigMap per namespace, laid out as the
 * package tree under `/opt/ray-gpu/python`, which goes on `PYTHONPATH`. Pure: the package's files come from the edge
 * (`loadRuntimePackage`), read once.
 */
import { createHash } from "node:crypto";
import { stableJson } from "../../core/serialize";
import type { ConfigMap, EnvVar, Volume, VolumeMount } from "../k8s/types";
import { TUNING_FILE, TUNING_FILE_ENV, TUNING_MOUNT_PATH, type TuningDocument } from "./document";

/** Directory put on `PYTHONPATH`; the package is mounted below it. */
export const RUNTIME_PYTHONPATH = "/opt/ray-gpu/python";
export const RUNTIME_PACKAGE = "ray_gpu";
/** Kubernetes stores a ConfigMap in one etcd value of at most 1 MiB; stay clear of it. */
export const MAX_CONFIGMAP_BYTES = 1_000_000;

/** The runtime package a RayJob mounts: the files of `ray_gpu` by their path inside it (`examples/train.py`). */
export interface RuntimePackage {
  readonly files: Readonly<Record<string, string>>;
}

/** Labels and namespace of a workload's ConfigMaps. */
export interface ConfigMapTarget {
  readonly workload: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
}

export const tuningConfigMapName = (workload: string) => `${workload}-tuning`;

/**
 * Name of the runtime package's ConfigMap: content-addressed (`ray-gpu-runtime-<hash>`), so every job of a namespace
 * shares one, and a new version of the package is a new ConfigMap rather than a change under running jobs.
 */
export function runtimeConfigMapName(runtime: RuntimePackage): string {
  let name = NAMES.get(runtime);
  if (name === undefined) {
    const hash = createHash("sha256");
    for (const path of Object.keys(runtime.files).sort()) hash.update(`${path}\0${runtime.files[path]}\0`);
    name = `ray-gpu-runtime-${hash.digest("hex").slice(0, 10)}`;
    NAMES.set(runtime, name);
  }
  return name;
}

/** Names already hashed, per package object (a package is read once and shared by every workload it renders). */
const NAMES = new WeakMap<RuntimePackage, string>();

/** The ConfigMap holding the tuning document and the files beside it (the DeepSpeed config), as byte-stable JSON. */
export function tuningConfigMap(
  target: ConfigMapTarget,
  document: TuningDocument,
  files: Readonly<Record<string, object>> = {},
): ConfigMap {
  const data: Record<string, string> = { [TUNING_FILE]: stableJson(document) };
  for (const [name, content] of Object.entries(files)) data[name] = stableJson(content);
  return configMap(tuningConfigMapName(target.workload), target, data);
}

/** ConfigMap keys cannot hold `/`: `examples/train.py` is stored as `examples.train.py`; the volume maps it back. */
const keyOf = (path: string) => path.replaceAll("/", ".");

/** The ConfigMap with the runtime package, one per namespace: every job there mounts it. */
export function runtimeConfigMap(
  namespace: string,
  runtime: RuntimePackage,
  labels: Readonly<Record<string, string>> = {},
): ConfigMap {
  const data = Object.fromEntries(Object.entries(runtime.files).map(([path, text]) => [keyOf(path), text]));
  return configMap(runtimeConfigMapName(runtime), { workload: "", namespace, labels }, data);
}

function configMap(name: string, target: ConfigMapTarget, data: Record<string, string>): ConfigMap {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: target.namespace, labels: { ...target.labels } },
    data,
  };
}

/** Bytes of a ConfigMap's data. */
export const configMapBytes = (cm: ConfigMap) => Object.values(cm.data).reduce((n, v) => n + Buffer.byteLength(v), 0);

/** The volumes, mounts and variables that hand a job its contract, on every Ray container. */
export interface ContractMounts {
  readonly volumes: readonly Volume[];
  readonly mounts: readonly VolumeMount[];
  readonly env: Readonly<Record<string, string>>;
}

const TUNING_VOLUME = "ray-gpu-tuning";
const RUNTIME_VOLUME = "ray-gpu-runtime";

/**
 * Mounts the tuning ConfigMap at `/etc/ray-gpu` and the runtime package below `PYTHONPATH`, after a `PYTHONPATH` of the
 * user's own.
 */
export function contractMounts(
  tuning: ConfigMap,
  runtimePackage: RuntimePackage,
  userPythonPath: string | undefined,
): ContractMounts {
  const items = Object.keys(runtimePackage.files)
    .map((path) => ({ key: keyOf(path), path }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return {
    volumes: [
      { name: TUNING_VOLUME, configMap: { name: tuning.metadata.name } },
      { name: RUNTIME_VOLUME, configMap: { name: runtimeConfigMapName(runtimePackage), items } },
    ],
    mounts: [
      { name: TUNING_VOLUME, mountPath: TUNING_MOUNT_PATH, readOnly: true },
      { name: RUNTIME_VOLUME, mountPath: `${RUNTIME_PYTHONPATH}/${RUNTIME_PACKAGE}`, readOnly: true },
    ],
    env: {
      [TUNING_FILE_ENV]: `${TUNING_MOUNT_PATH}/${TUNING_FILE}`,
      PYTHONPATH: [userPythonPath, RUNTIME_PYTHONPATH].filter(Boolean).join(":"),
    },
  };
}

/** The bucket is known only once the platform exists: read from its ConfigMap (optional: jobs start without it). */
export function storageBucketEnv(storageConfigMap: string): EnvVar {
  return {
    name: "RAY_GPU_STORAGE_BUCKET",
    valueFrom: { configMapKeyRef: { name: storageConfigMap, key: "bucket", optional: true } },
  };
}
