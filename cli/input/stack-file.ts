/**
 * Reads `Pulumi.<stack>.yaml` the way Pulumi would hand it to `stacks/index.ts`: the `config:` map, of which
 * the `ray-gpu:` keys are validated with the same schema the program uses.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { namespaceKeys, parseStackConfig, type StackConfig } from "../../core/config/stack";
import { ConfigError, namingSource } from "../../core/errors";
import { planStack, type PlanStackOptions, type StackPlan } from "../../workloads/stack";
import { UsageError } from "../io";
import { checkInputDir, isErrnoError, readInputFile } from "./file";
import { parseYamlText } from "./yaml";
import { pulumiConfigSecrets, SECRETS_NAMESPACE } from "../../workloads/security/secrets";

/** The stack names among file names: `Pulumi.<name>.yaml` gives `<name>`; other files none. Sorted. */
export function stackNames(fileNames: readonly string[]): string[] {
  return fileNames
    .map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .sort();
}

/** Stack names with a `Pulumi.<name>.yaml` in `dir`. */
export function listStacks(dir: string): string[] {
  return stackNames(readdirSync(checkInputDir(dir)));
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
  const doc = parseYamlText(readInputFile(file, "stack file"), file) as { config?: Record<string, unknown> };
  return Object.fromEntries(
    Object.entries(doc.config ?? {}).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/**
 * Loads and validates `Pulumi.<stack>.yaml` from `dir`; `text` is the file as read (for a command that edits it).
 * @throws UsageError when the file does not exist; ConfigError listing every invalid key.
 */
export function loadStackConfig(dir: string, stack: string): { config: StackConfig; file: string; text: string } {
  checkStackName(stack);
  const file = join(checkInputDir(dir), `Pulumi.${stack}.yaml`);
  let text: string;
  try {
    text = readInputFile(file, "stack file");
  } catch (err) {
    if (err instanceof UsageError && !existsIn(dir, `Pulumi.${stack}.yaml`)) {
      const known = listStacks(dir);
      throw new UsageError(
        `no stack "${stack}": ${file} does not exist${known.length ? `; stacks here: ${known.join(", ")}` : ""}`,
      );
    }
    throw err;
  }
  return { config: stackConfigFromText(text, file), file, text };
}

/** Validates the text of a `Pulumi.<stack>.yaml` (read from a file, or from git by `ray-gpu diff`). */
export function stackConfigFromText(text: string, file: string): StackConfig {
  const doc = parseYamlText(text, file);
  const config = parseStackConfig(rayGpuKeys(doc, file), file);
  const problems = secretKeyProblems(config, (doc as { config?: Record<string, unknown> } | null)?.config ?? {});
  if (problems.length > 0) throw new ConfigError(problems, file);
  return config;
}

/**
 * The Pulumi config keys a submitted workload's `secretEnv` names must be in the stack file, encrypted
 * (`{secure: ...}`, as `pulumi config set --secret` writes them): `pulumi up` fails on a missing one, and a plain
 * value would sit in the committed file in clear text.
 */
function secretKeyProblems(config: StackConfig, entries: Readonly<Record<string, unknown>>) {
  return config.workloads.flatMap((w, i) =>
    w.example
      ? []
      : Object.entries(pulumiConfigSecrets(w.secretEnv)).flatMap(([name, key]) => {
          const full = key.includes(":") ? key : `${SECRETS_NAMESPACE}:${key}`;
          const value = entries[full];
          const secure = value !== null && typeof value === "object" && "secure" in value;
          if (secure) return [];
          const set = `pulumi config set --secret ${full} <value>`;
          return [
            {
              path: `ray-gpu:workloads[${i}].secretEnv.${name}.pulumiConfig`,
              message:
                value === undefined
                  ? `names ${full}, which this stack file does not set (pulumi up would stop there); run ${set}`
                  : `names ${full}, which this stack file holds in clear text; run ${set} to store it encrypted`,
            },
          ];
        }),
  );
}

/** Whether `dir` lists `name` (a dangling link counts: its message is the file's own). */
function existsIn(dir: string, name: string): boolean {
  try {
    return readdirSync(dir).includes(name);
  } catch (err) {
    if (isErrnoError(err)) return false;
    throw err;
  }
}

/** Pulumi stack names: letters, digits, '-', '_' and '.', at most 100 (so a name never reaches outside `-C`). */
const STACK_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/** @throws UsageError for a name Pulumi would refuse (and that could name a path outside the folder). */
export function checkStackName(stack: string): void {
  if (!STACK_NAME.test(stack) || stack === "." || stack === "..")
    throw new UsageError(
      `stack name ${JSON.stringify(stack.slice(0, 100))} is not valid: use letters, digits, '-', '_' and '.' (at most 100)`,
    );
}

/**
 * Loads `Pulumi.<stack>.yaml` from `dir` and plans it; a problem only the planner sees (a pool no workload can use, a
 * workload that does not fit) is reported against the file too.
 */
export function planStackFile(
  dir: string,
  stack: string,
  options: PlanStackOptions,
): { config: StackConfig; file: string; plan: StackPlan } {
  const { config, file } = loadStackConfig(dir, stack);
  return { config, file, plan: namingSource(file, () => planStack(config, options)) };
}
