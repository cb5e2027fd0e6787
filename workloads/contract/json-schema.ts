/**
 * Generated views of the tuning-document schema: the JSON Schema the Python runtime validates with (the `RAY_GPU_*`
 * variable of each knob under `x-env`, the sections and knobs of each kind under `x-sections` and `x-knobs`), and the
 * contract table of docs/runtime.md. `npm run generate` writes both; a test fails when the committed copies drift.
 */
import { z } from "zod";
import { withoutSafeIntegerBounds } from "../../core/json-schema";
import type { WorkloadKind } from "../../core/config/workloads";
import { API_VERSION, KNOBS_BY_KIND, knobEnvName, SECTIONS_BY_KIND, TuningDocumentSchema } from "./document";

/** The slice of JSON Schema the generator and the Python reader use. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  [extension: string]: unknown;
}

const kinds = Object.keys(SECTIONS_BY_KIND) as WorkloadKind[];

/** The JSON Schema of the tuning document, with the contract's extensions. */
export function tuningJsonSchema(): JsonSchema {
  const schema = z.toJSONSchema(TuningDocumentSchema) as JsonSchema;
  withoutSafeIntegerBounds(schema);
  for (const [name, knob] of Object.entries(schema.properties!["knobs"]!.properties!))
    knob["x-env"] = knobEnvName(name);
  return {
    ...schema,
    $id: `https://pulumi-ray-gpu.dev/schemas/${API_VERSION}/tuning.json`,
    title: `ray-gpu tuning document (${API_VERSION})`,
    "x-sections": SECTIONS_BY_KIND,
    "x-knobs": Object.fromEntries(kinds.map((k) => [k, Object.keys(KNOBS_BY_KIND[k].shape)])),
  };
}

/** A field's type and rule in words, for the docs table. */
function describeField(s: JsonSchema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(" \\| ");
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  if (s.type === "array") return `list of ${describeField(s.items ?? {})}`;
  if (s.type === "object") return s.properties ? "object" : "map";
  const bounds = [
    s.minimum !== undefined ? `≥ ${s.minimum}` : s.exclusiveMinimum !== undefined ? `> ${s.exclusiveMinimum}` : "",
    s.maximum !== undefined ? `≤ ${s.maximum}` : "",
  ];
  return [s.type ?? "any", bounds.filter(Boolean).join(", ")].filter(Boolean).join(" ");
}

/** Kinds whose documents carry section `section` (or every kind for the common keys). */
function kindsWith(section: string): string {
  const having = kinds.filter((k) => (SECTIONS_BY_KIND[k] as readonly string[]).includes(section));
  return having.length === kinds.length || having.length === 0 ? "all" : having.join(", ");
}

/** One row per leaf key under `key` (objects with named keys are expanded). */
function leafRows(key: string, s: JsonSchema, optional: boolean, kinds: string): string[] {
  if (!s.properties) return [`| \`${key}\` | ${describeField(s)}${optional ? " (optional)" : ""} | ${kinds} |`];
  return Object.entries(s.properties).flatMap(([field, f]) =>
    leafRows(`${key}.${field}`, f, !(s.required ?? []).includes(field), kinds),
  );
}

function sectionRows(schema: JsonSchema): string[] {
  return Object.entries(schema.properties!)
    .filter(([section]) => section !== "knobs")
    .flatMap(([section, s]) => leafRows(section, s, false, kindsWith(section)));
}

function knobRows(schema: JsonSchema): string[] {
  return Object.entries(schema.properties!["knobs"]!.properties!).map(([name, k]) => {
    const having = kinds.filter((kind) => name in KNOBS_BY_KIND[kind].shape);
    return (
      `| \`knobs.${name}\` | \`${String(k["x-env"])}\` | ${describeField(k)} ` +
      `| ${having.length === kinds.length ? "all" : having.join(", ")} ` +
      `|`
    );
  });
}

/** The contract tables of docs/runtime.md, generated from the schema. */
export function contractMarkdown(schema: JsonSchema = tuningJsonSchema()): string {
  return [
    "| key | type | kinds |",
    "|---|---|---|",
    ...sectionRows(schema),
    "",
    "| knob | variable | type | kinds |",
    "|---|---|---|---|",
    ...knobRows(schema),
    "",
  ].join("\n");
}
