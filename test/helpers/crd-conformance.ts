/**
 * Validates objects against the official KubeRay CRDs the way a Kubernetes API server with strict field
 * validation does: structural defaulting, unknown fields rejected (including in metadata), types, enums,
 * formats and bounds checked (ajv), list-type uniqueness (`x-kubernetes-list-type: map|set`), and the CRDs'
 * CEL rules (`x-kubernetes-validations`) evaluated with a CEL library. Transition rules (those that read
 * `oldSelf`) only apply on update, so they are skipped, as on create.
 *
 * The CRDs are read from `$KUBERAY_CRDS`, else `../shared/kuberay/v1.7.0/crds` beside the repo. They are not
 * copied into the project.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import Ajv, { type ValidateFunction } from "ajv";
import { parse } from "yaml";

type Schema = Record<string, unknown>;
type CelEvaluate = (expr: string, ctx: Record<string, unknown>) => unknown;

/** Where the CRDs are, or why they cannot be found. */
export function crdDirectory(): { dir: string } | { missing: string } {
  const fromEnv = process.env["KUBERAY_CRDS"];
  const dir = fromEnv ?? resolve(__dirname, "../../../shared/kuberay/v1.7.0/crds");
  if (existsSync(join(dir, "ray.io_rayjobs.yaml"))) return { dir };
  return {
    missing: fromEnv
      ? `KUBERAY_CRDS=${fromEnv} has no ray.io_rayjobs.yaml`
      : `KubeRay CRDs not found at ${dir}; set KUBERAY_CRDS to the folder with ray.io_rayjobs.yaml (KubeRay v1.7.0)`,
  };
}

/** A strict subset of ObjectMeta: what a create request may carry. */
const LABEL_VALUE = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";
const OBJECT_META: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["name"],
  properties: {
    name: { type: "string", maxLength: 253, pattern: "^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$" },
    namespace: { type: "string", maxLength: 63, pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" },
    labels: { type: "object", additionalProperties: { type: "string", maxLength: 63, pattern: LABEL_VALUE } },
    annotations: { type: "object", additionalProperties: { type: "string" } },
    finalizers: { type: "array", items: { type: "string" } },
  },
};

/**
 * A Go (RE2) pattern as a JavaScript one. RE2's leading `(?i)` (case-insensitive, which the Prometheus Operator's CRDs
 * use) has no inline form in JavaScript: each letter outside a class becomes `[xX]`.
 */
export function goPattern(pattern: string): string {
  const at = pattern.indexOf("(?i)");
  if (at < 0) return pattern;
  const rest = pattern.slice(at + 4);
  let out = "";
  let inClass = false;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (c === "\\") {
      out += c + (rest[++i] ?? "");
      continue;
    }
    if (c === "[") inClass = true;
    if (c === "]") inClass = false;
    out += !inClass && /[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c;
  }
  return pattern.slice(0, at) + out;
}

/** OpenAPI v3 (Kubernetes structural schema) to a JSON Schema ajv enforces strictly. */
function toJsonSchema(node: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k.startsWith("x-kubernetes-") || k === "default") continue;
    if (k === "properties") {
      out[k] = Object.fromEntries(Object.entries(v as Record<string, Schema>).map(([p, s]) => [p, toJsonSchema(s)]));
    } else if ((k === "items" || k === "additionalProperties") && v && typeof v === "object") {
      out[k] = toJsonSchema(v as Schema);
    } else if (k === "anyOf" || k === "allOf" || k === "oneOf") {
      out[k] = (v as Schema[]).map(toJsonSchema);
    } else if (k === "pattern" && typeof v === "string") {
      out[k] = goPattern(v);
    } else out[k] = v;
  }
  if (node["x-kubernetes-int-or-string"]) {
    delete out["type"];
    out["anyOf"] = [{ type: "integer" }, { type: "string" }];
  }
  // Structural schemas prune unknown fields; with strict field validation they are errors instead.
  if (
    node["type"] === "object" &&
    node["additionalProperties"] === undefined &&
    !node["x-kubernetes-preserve-unknown-fields"]
  ) {
    out["additionalProperties"] = false;
  }
  return out;
}

/** Applies `default`s of the schema to `data`, as the API server does before validation. */
function applyDefaults(schema: Schema, data: unknown): void {
  if (Array.isArray(data)) {
    const items = schema["items"] as Schema | undefined;
    if (items) data.forEach((d) => applyDefaults(items, d));
    return;
  }
  if (!data || typeof data !== "object") return;
  const obj = data as Record<string, unknown>;
  const props = (schema["properties"] ?? {}) as Record<string, Schema>;
  for (const [p, s] of Object.entries(props)) {
    if (obj[p] === undefined && s["default"] !== undefined) obj[p] = structuredClone(s["default"]);
    if (obj[p] !== undefined) applyDefaults(s, obj[p]);
  }
  const extra = schema["additionalProperties"];
  if (extra && typeof extra === "object")
    for (const [p, v] of Object.entries(obj)) if (!(p in props)) applyDefaults(extra as Schema, v);
}

/** CEL sees JSON integers as ints (bigint in the CEL library). */
function toCel(schema: Schema, data: unknown): unknown {
  if (Array.isArray(data)) return data.map((d) => toCel((schema["items"] ?? {}) as Schema, d));
  if (typeof data === "number" && schema["type"] === "integer") return BigInt(data);
  if (data && typeof data === "object") {
    const props = (schema["properties"] ?? {}) as Record<string, Schema>;
    return Object.fromEntries(
      Object.entries(data).map(([k, v]) => [
        k,
        toCel(props[k] ?? ((schema["additionalProperties"] ?? {}) as Schema), v),
      ]),
    );
  }
  return data;
}

/** List-type uniqueness and CEL rules, walking schema and data together. */
function structuralChecks(
  schema: Schema,
  data: unknown,
  path: string,
  check: { cel: CelEvaluate; errors: string[] },
): void {
  const { cel, errors } = check;
  if (data === undefined || data === null) return;
  for (const rule of (schema["x-kubernetes-validations"] ?? []) as { rule: string; message?: string }[]) {
    if (/\boldSelf\b/.test(rule.rule)) continue;
    let ok: unknown;
    try {
      ok = cel(rule.rule, { self: toCel(schema, data) });
    } catch (e) {
      ok = `error: ${(e as Error).message}`;
    }
    if (ok !== true)
      errors.push(
        `${path || "/"}: CEL rule failed: ${rule.message ?? rule.rule}${ok === false ? "" : ` (${String(ok)})`}`,
      );
  }
  if (Array.isArray(data)) {
    const items = (schema["items"] ?? {}) as Schema;
    const listType = schema["x-kubernetes-list-type"];
    const keyOf = (d: unknown, i: number) =>
      listType === "map"
        ? JSON.stringify(
            ((schema["x-kubernetes-list-map-keys"] ?? []) as string[]).map((k) => (d as Record<string, unknown>)[k]),
          )
        : listType === "set"
          ? JSON.stringify(d)
          : String(i);
    const seen = new Set<string>();
    data.forEach((d, i) => {
      const key = keyOf(d, i);
      if (seen.has(key)) errors.push(`${path}[${i}]: duplicate entry ${key} in a list of type ${String(listType)}`);
      seen.add(key);
      structuralChecks(items, d, `${path}[${i}]`, check);
    });
    return;
  }
  if (typeof data === "object") {
    const props = (schema["properties"] ?? {}) as Record<string, Schema>;
    for (const [k, v] of Object.entries(data)) {
      const s =
        props[k] ??
        (typeof schema["additionalProperties"] === "object" ? (schema["additionalProperties"] as Schema) : undefined);
      if (s) structuralChecks(s, v, `${path}/${k}`, check);
    }
  }
}

/** Validates `ray.io/v1` objects against the KubeRay CRDs in a folder. */
export class CrdConformance {
  private readonly validators = new Map<string, { apiVersion: string; schema: Schema; validate: ValidateFunction }>();

  private constructor(private readonly cel: CelEvaluate) {}

  /** Loads every `ray.io_*.yaml` CRD of `dir`. */
  static async load(dir: string, kinds: readonly string[] = ["RayJob", "RayCluster"]): Promise<CrdConformance> {
    return CrdConformance.loadFiles(
      kinds.map((k) => join(dir, `ray.io_${k.toLowerCase()}s.yaml`)),
      "v1",
    );
  }

  /** Loads the `version` of each CRD file (e.g. Kueue's `v1beta2`). */
  static async loadFiles(files: readonly string[], version: string): Promise<CrdConformance> {
    const { evaluate } = await import("@marcbachmann/cel-js");
    const checker = new CrdConformance((expr, ctx) => evaluate(expr, ctx));
    const ajv = new Ajv({ allErrors: true, strict: false });
    ajv.addFormat("int32", {
      type: "number",
      validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    });
    ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
    ajv.addFormat("date-time", (s: string) => !Number.isNaN(Date.parse(s)));
    for (const file of files) {
      const crd = parse(readFileSync(file, "utf8")) as {
        spec: {
          group: string;
          names: { kind: string };
          versions: { name: string; schema: { openAPIV3Schema: Schema } }[];
        };
      };
      const served = crd.spec.versions.find((v) => v.name === version);
      if (!served) throw new Error(`${file} has no ${version} version`);
      const schema = served.schema.openAPIV3Schema;
      const json = toJsonSchema(schema);
      (json["properties"] as Record<string, Schema>)["metadata"] = OBJECT_META;
      json["required"] = ["apiVersion", "kind", "metadata"];
      const apiVersion = `${crd.spec.group}/${version}`;
      checker.validators.set(crd.spec.names.kind, { apiVersion, schema, validate: ajv.compile(json) });
    }
    return checker;
  }

  /** Every problem the API server would report for creating `obj`; empty when it would be accepted. */
  validate(obj: unknown): string[] {
    const o = structuredClone(obj) as { apiVersion?: unknown; kind?: unknown };
    const entry = this.validators.get(String(o.kind));
    if (!entry) return [`no CRD loaded for kind ${JSON.stringify(o.kind)}`];
    if (o.apiVersion !== entry.apiVersion)
      return [`apiVersion must be ${entry.apiVersion}, got ${JSON.stringify(o.apiVersion)}`];
    applyDefaults(entry.schema, o);
    const errors: string[] = [];
    if (!entry.validate(o)) {
      for (const e of entry.validate.errors ?? []) {
        const extra =
          e.keyword === "additionalProperties"
            ? ` "${String((e.params as { additionalProperty: string }).additionalProperty)}"`
            : "";
        errors.push(`${e.instancePath || "/"}: ${e.message ?? e.keyword}${extra}`);
      }
    }
    structuralChecks(entry.schema, o, "", { cel: this.cel, errors });
    return errors;
  }
}
