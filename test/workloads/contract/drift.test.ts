/**
 * The runtime contract is defined once (workloads/contract/document.ts). Everything derived from it is checked here:
 * the JSON Schema the Python runtime validates with, the docs table, the variable names on the rendered pods, and the
 * typed knobs of every kind. Regenerate with `npm run generate` when the definition changes.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { stableJson } from "../../../core/serialize";
import { contractMarkdown, tuningJsonSchema } from "../../../workloads/contract/json-schema";
import {
  KNOBS_BY_KIND,
  knobEnvName,
  SECTIONS_BY_KIND,
  TuningDocumentSchema,
} from "../../../workloads/contract/document";
import type { ConfigMap, RayJob } from "../../../workloads/k8s/types";
import { planStack } from "../../../workloads/stack";
import { BEGIN, END } from "../../../scripts/generate";
import { runRecordJsonSchema } from "../../../core/tune/run-record";
import { repoRoot, repoStack, runtime } from "../../helpers/fixtures";

describe("the runtime contract, defined once", () => {
  it("ships the JSON Schema generated from the definition (run npm run generate after changing it)", () => {
    expect(readFileSync(join(repoRoot, "runtime/ray_gpu/tuning.schema.json"), "utf8")).toBe(
      stableJson(tuningJsonSchema()),
    );
  });

  it("ships the run record's JSON Schema generated from its definition (npm run generate)", () => {
    expect(readFileSync(join(repoRoot, "runtime/ray_gpu/run_record.schema.json"), "utf8")).toBe(
      stableJson(runRecordJsonSchema()),
    );
  });

  it("documents the keys and variables generated from the definition", () => {
    const doc = readFileSync(join(repoRoot, "docs/runtime.md"), "utf8");
    expect(doc.slice(doc.indexOf(BEGIN) + BEGIN.length + 1, doc.indexOf(END))).toBe(contractMarkdown());
  });

  it.each(["dev", "prod"] as const)(
    "writes documents the definition accepts, with exactly their kind's sections and knobs, and the variables it names (%s)",
    (env) => {
      for (const { objects } of planStack(repoStack(env), { runtime }).objects) {
        const cm = objects.find((o): o is ConfigMap => o.kind === "ConfigMap" && o.metadata.name.endsWith("-tuning"))!;
        const doc = TuningDocumentSchema.parse(JSON.parse(cm.data["tuning.json"]!));
        const kind = doc.workload.kind;
        expect(
          Object.keys(doc)
            .filter((k) => !["apiVersion", "kind", "workload", "knobs"].includes(k))
            .sort(),
        ).toEqual([...SECTIONS_BY_KIND[kind]].sort());
        expect(KNOBS_BY_KIND[kind].strict().safeParse(doc.knobs).success).toBe(true);
        const job = objects.find((o): o is RayJob => o.kind === "RayJob")!;
        const vars = job.spec.rayClusterSpec.workerGroupSpecs[0]!.template.spec.containers[0]!.env!.map((e) => e.name);
        for (const knob of Object.keys(doc.knobs)) expect(vars).toContain(knobEnvName(knob));
      }
    },
  );
});
