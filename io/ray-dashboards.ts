/**
 * Reads Ray's own Grafana dashboards (`dashboards/ray-<version>/`, generated from the pinned Ray by
 * scripts/ray-dashboards.py) from this installation: the edge, as io/runtime-package.ts is for the runtime package.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { RAY_VERSION } from "../core/ray";

/** Ray's dashboards by file name (`default.json`, `data.json`, `train.json`), as Ray generates them. */
export type RayDashboards = Readonly<Record<string, string>>;

/** The `dashboards/ray-<RAY_VERSION>` folder of this installation, found from this file (source or compiled). */
export function rayDashboardsDir(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "dashboards", `ray-${RAY_VERSION}`);
    if (existsSync(join(candidate, "default.json"))) return candidate;
    if (dirname(dir) === dir)
      throw new Error(`Ray's dashboards are missing: no dashboards/ray-${RAY_VERSION} above ${from}`);
  }
}

/** Every dashboard of the folder, sorted by name. */
export function loadRayDashboards(dir: string = rayDashboardsDir()): RayDashboards {
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort();
  return Object.fromEntries(names.map((n) => [n, readFileSync(join(dir, n), "utf8")]));
}
