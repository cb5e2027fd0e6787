/**
 * The runtime library (`runtime/ray_gpu`, Python) shipped with every RayJob: a ConfigMap `<workload>-runtime` holds
 * its files, the RayJob mounts it at `/opt/ray-gpu/python/ray_gpu` and puts `/opt/ray-gpu/python` on `PYTHONPATH`,
 * so `import ray_gpu` works in any image with Ray, and `python -m ray_gpu.examples.<kind>` runs the examples.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import type { ConfigMap, Volume } from "../rayjob/types";
import { stableYaml } from "../../core/serialize";

/** Directory put on `PYTHONPATH`; the package is mounted below it. */
export const RUNTIME_PYTHONPATH = "/opt/ray-gpu/python";
export const RUNTIME_PACKAGE = "ray_gpu";
/** Source of the package in this repository. */
export const RUNTIME_SOURCE_DIR = resolve(__dirname, "../../runtime", RUNTIME_PACKAGE);

/** Name of a workload's runtime ConfigMap. */
export const runtimeConfigMapName = (workload: string) => `${workload}-runtime`;

/** The package's files, `relative/path.py` → content, sorted (tests and `__pycache__` excluded). */
export function runtimeFiles(dir: string = RUNTIME_SOURCE_DIR): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = join(d, entry.name);
      if (entry.isDirectory() && entry.name !== "__pycache__") walk(full);
      else if (entry.isFile() && entry.name.endsWith(".py")) {
        if (entry.name.slice(0, -3).includes(".")) throw new Error(`runtime file ${full}: module names cannot contain dots`);
        files[relative(dir, full).split(sep).join("/")] = readFileSync(full, "utf8");
      }
    }
  };
  walk(dir);
  if (!files["__init__.py"]) throw new Error(`the runtime package is missing: no __init__.py under ${dir}`);
  return files;
}

/** The repository's package, read once per process: every rendered workload ships the same files. */
let shipped: Readonly<Record<string, string>> | undefined;
const shippedFiles = () => (shipped ??= runtimeFiles());

/** ConfigMap keys cannot hold `/`: `examples/train.py` is stored as `examples.train.py` and mapped back by the volume. */
const keyOf = (path: string) => path.replaceAll("/", ".");

/** The ConfigMap with the runtime package. */
export function runtimeConfigMap(args: { workload: string; namespace: string; labels: Readonly<Record<string, string>>; files?: Readonly<Record<string, string>> }): ConfigMap {
  const files = args.files ?? shippedFiles();
  const data = Object.fromEntries(Object.keys(files).map((p) => [keyOf(p), files[p]!]));
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name: runtimeConfigMapName(args.workload), namespace: args.namespace, labels: { ...args.labels } }, data };
}

/** The volume that lays the ConfigMap's keys out as the package tree. */
export function runtimeVolume(configMap: ConfigMap): Volume {
  const items = Object.keys(configMap.data)
    .sort()
    .map((key) => ({ key, path: key.replace(/\.py$/, "").replaceAll(".", "/") + ".py" }));
  return { name: "ray-gpu-runtime", configMap: { name: configMap.metadata.name, items } };
}

export const RUNTIME_MOUNT = { name: "ray-gpu-runtime", mountPath: `${RUNTIME_PYTHONPATH}/${RUNTIME_PACKAGE}`, readOnly: true } as const;

/** KubeRay's `runtimeEnvYAML`: Ray's runtime-env field names, keys sorted, so previews stay byte-stable. */
export function runtimeEnvYAML(env: { readonly pip?: readonly string[] | undefined; readonly envVars?: Readonly<Record<string, string>> | undefined }): string | undefined {
  const doc = { ...(env.pip ? { pip: [...env.pip] } : {}), ...(env.envVars && Object.keys(env.envVars).length > 0 ? { env_vars: { ...env.envVars } } : {}) };
  return Object.keys(doc).length > 0 ? stableYaml(doc) : undefined;
}
