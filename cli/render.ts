/** `ray-gpu render`: one YAML file per Kubernetes object, plus `plan.json`, byte-stable. */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stableJson, stableYaml } from "../core/serialize";
import type { StackPlan } from "../workloads/stack";
import { planDocument } from "./plan-view";
import { UsageError } from "./io";

/** Files this command writes (and replaces). */
const RENDERED_FILE = /^(rayjob|configmap)-.+\.yaml$|^plan\.json$/;

/** File name of a rendered object: `<kind>-<name>.yaml`, lowercase. */
export function objectFileName(kind: string, name: string): string {
  return `${kind.toLowerCase()}-${name}.yaml`;
}

/**
 * Writes the stack's objects and `plan.json` into `outDir`. Files this command wrote before (`rayjob-*.yaml`,
 * `configmap-*.yaml`, `plan.json`) are removed first, so a deleted workload leaves no stale manifest; other files
 * are kept, and a folder holding `Pulumi*.yaml` is refused.
 * @returns the written file names, sorted.
 */
export function writeRender(stack: string, plan: StackPlan, outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  const existing = readdirSync(outDir);
  if (existing.some((f) => /^Pulumi(\..+)?\.yaml$/.test(f)))
    throw new UsageError(`${outDir} holds a Pulumi project; render into a folder of its own, e.g. out/${stack}`);
  for (const f of existing) if (RENDERED_FILE.test(f)) rmSync(join(outDir, f));
  const files = new Map<string, string>();
  for (const obj of [...plan.shared, ...plan.objects.flatMap((o) => o.objects)]) {
    files.set(objectFileName(obj.kind, obj.metadata.name), stableYaml(obj));
  }
  files.set("plan.json", stableJson(planDocument(stack, plan)));
  for (const [name, text] of files) writeFileSync(join(outDir, name), text);
  return [...files.keys()].sort();
}
