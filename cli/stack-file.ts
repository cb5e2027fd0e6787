/**
 * Reads `Pulumi.<stack>.yaml` the way Pulumi would hand it to `stacks/index.ts`: the `config:` map, of which
 * the `ray-gpu:` keys are validated with the same schema the program uses.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { namespaceKeys, parseStackConfig, type StackConfig } from "../core/config/stack";
import { ConfigError } from "../core/errors";
import { UsageError } from "./io";

/** Stack names with a `Pulumi.<name>.yaml` in `dir`. */
export function listStacks(dir: string): string[] {
  return readdirSync(dir)
    .map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .sort();
}

/** Parses YAML text; syntax errors become a {@link ConfigError} with line numbers. */
export function parseYamlFile(text: string, file: string): unknown {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((e) => ({
        path: `${file}:${(e.linePos?.[0]?.line ?? 0).toString()}`,
        message: e.message.split("\n")[0] ?? e.message,
      })),
      file,
    );
  }
  return doc.toJS();
}

/** The `ray-gpu:` keys of a stack file's `config:` map, namespace stripped. */
export function rayGpuKeys(doc: unknown, file: string): Record<string, unknown> {
  const config = doc && typeof doc === "object" ? (doc as Record<string, unknown>)["config"] : undefined;
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    throw new ConfigError(
      [{ path: `${file}: config`, message: "the file needs a `config:` map with the ray-gpu: keys" }],
      file,
    );
  }
  const raw = namespaceKeys(config as Record<string, unknown>);
  const awsRegion = (config as Record<string, unknown>)["aws:region"];
  if (awsRegion !== undefined && raw["region"] !== undefined && awsRegion !== raw["region"]) {
    throw new ConfigError(
      [
        {
          path: "aws:region",
          message:
            `differs from ray-gpu:region (${JSON.stringify(raw["region"])}); the stack uses ray-gpu:region, ` +
            `so drop aws:region or make them equal`,
          value: awsRegion,
        },
      ],
      file,
    );
  }
  return raw;
}

/**
 * The `config:` map of a stack file as the Pulumi runtime hands it to a program: plain values as strings,
 * structured values as JSON text.
 */
export function pulumiConfigMap(file: string): Record<string, string> {
  const doc = parseYamlFile(readFileSync(file, "utf8"), file) as { config?: Record<string, unknown> };
  return Object.fromEntries(
    Object.entries(doc.config ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/**
 * Loads and validates `Pulumi.<stack>.yaml` from `dir`.
 * @throws UsageError when the file does not exist; ConfigError listing every invalid key.
 */
export function loadStackConfig(dir: string, stack: string): { config: StackConfig; file: string } {
  const file = join(dir, `Pulumi.${stack}.yaml`);
  if (!existsSync(file)) {
    const known = listStacks(dir);
    throw new UsageError(
      `no stack "${stack}": ${file} does not exist${known.length ? `; stacks here: ${known.join(", ")}` : ""}`,
    );
  }
  const raw = rayGpuKeys(parseYamlFile(readFileSync(file, "utf8"), file), file);
  return { config: parseStackConfig(raw, file), file };
}
