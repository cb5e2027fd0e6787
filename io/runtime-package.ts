/**
 * Reads the runtime package (`runtime/ray_gpu`: the Python library, its examples and the contract's JSON Schema) from
 * disk. This is the edge: the CLI and the Pulumi program load it once and pass it to the pure planners, which ship it
 * in every job's ConfigMap.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type { RuntimePackage } from "../workloads/contract/configmaps";

/** Files the package ships: Python modules and JSON data (the contract's schema). */
const SHIPPED = /\.(py|json)$/;

/** The `runtime/ray_gpu` folder of this installation, found from this file (source or compiled). */
export function runtimePackageDir(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "runtime", "ray_gpu");
    if (existsSync(join(candidate, "__init__.py"))) return candidate;
    if (dirname(dir) === dir)
      throw new Error(`the runtime package is missing: no runtime/ray_gpu/__init__.py above ${from}`);
  }
}

/** Reads the package: every shipped file by its path inside the package, sorted; tests and caches excluded. */
export function loadRuntimePackage(dir: string = runtimePackageDir()): RuntimePackage {
  const files: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )) {
      const full = join(d, entry.name);
      if (entry.isDirectory() && entry.name !== "__pycache__") walk(full);
      else if (entry.isFile() && SHIPPED.test(entry.name))
        files[relative(dir, full).split(sep).join("/")] = readFileSync(full, "utf8");
    }
  };
  walk(resolve(dir));
  if (!files["__init__.py"]) throw new Error(`the runtime package is missing: no __init__.py under ${dir}`);
  const keys = Object.keys(files).map((p) => p.replaceAll("/", "."));
  const clash = keys.find((k, i) => keys.indexOf(k) !== i);
  if (clash) throw new Error(`runtime files under ${dir} collide as ConfigMap key ${clash}: rename one`);
  return { files };
}
