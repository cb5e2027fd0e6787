/** `ray-gpu render`: one YAML file per Kubernetes object, plus `plan.json`, byte-stable. */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stableJson, stableYaml } from "../core/serialize";
import type { StackPlan } from "../workloads/stack";
import { planDocument } from "./plan-view";

/** File name of a rendered object: `<kind>-<name>.yaml`, lowercase. */
export function objectFileName(kind: string, name: string): string {
  return `${kind.toLowerCase()}-${name}.yaml`;
}

/**
 * Writes the stack's objects and `plan.json` into `outDir`. Files this command wrote before (`*.yaml`,
 * `plan.json`) are removed first, so a deleted workload does not leave a stale manifest behind.
 * @returns the written file names, sorted.
 */
export function writeRender(stack: string, plan: StackPlan, outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  for (const f of readdirSync(outDir)) if (f.endsWith(".yaml") || f === "plan.json") rmSync(join(outDir, f));
  const files = new Map<string, string>();
  for (const { objects } of plan.objects) {
    for (const obj of objects) files.set(objectFileName(obj.kind, obj.metadata.name), stableYaml(obj));
  }
  files.set("plan.json", stableJson(planDocument(stack, plan)));
  for (const [name, text] of files) writeFileSync(join(outDir, name), text);
  return [...files.keys()].sort();
}
