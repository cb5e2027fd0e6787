/** This package's own `package.json`, found from this file whether it runs from source or compiled (dist/). */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The version of pulumi-ray-gpu that is running. */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "pulumi-ray-gpu" && pkg.version) return pkg.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}
