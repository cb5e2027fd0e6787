/**
 * Reads `Pulumi.<stack>.yaml` the way Pulumi would hand it to `stacks/index.ts`: read as go-yaml v3 reads it
 * (pulumi-yaml.ts), its `config:` map with `Pulumi.yaml`'s project config merged in (config-map.ts), of which the
 * `ray-gpu:` keys are validated with the same schema the program uses.
 */
import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { namespaceKeys, parseStackConfig, type StackConfig } from "../../core/config/stack";
import { ConfigError, namingSource } from "../../core/errors";
import { planStack, type PlanStackOptions, type StackPlan } from "../../workloads/stack";
import { UsageError } from "../io";
import { checkInputDir, isErrnoError, readInputFile } from "./file";
import { stackConfigMap, type ConfigMap } from "./config-map";
import { DEFAULT_PROJECT, projectFromText, type ProjectFile } from "./project-file";
import { parsePulumiYamlText } from "./pulumi-yaml";
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

/** The project of `dir`: its `Pulumi.yaml`, or this package's project with no config when the folder has none. */
export function projectIn(dir: string): ProjectFile {
  if (!existsIn(dir, "Pulumi.yaml")) return DEFAULT_PROJECT;
  const file = join(dir, "Pulumi.yaml");
  return projectFromText(readInputFile(file, "project file"), file);
}

/** The stack's name in a `Pulumi.<stack>.yaml` file name (for Pulumi's own messages). */
const stackOf = (file: string) => /Pulumi\.(.+)\.yaml$/.exec(basename(file))?.[1] ?? basename(file);

/** A stack file's text as Pulumi's config map, with the project's config merged in. */
function configMapOf(text: string, file: string, project: ProjectFile): ConfigMap {
  return stackConfigMap(parsePulumiYamlText(text, file), file, stackOf(file), project);
}

/**
 * The config map of a stack file as the Pulumi runtime hands it to a program, `Pulumi.yaml`'s project config
 * merged in: plain values as strings, structured values as JSON text (config/object.go, MarshalString; a project
 * default as fmt's %v of it: pkg/workspace/config.go, createConfigValue, which is the same text).
 */
export function pulumiConfigMap(file: string): Record<string, string> {
  const { entries } = configMapOf(readInputFile(file, "stack file"), file, projectIn(dirname(file)));
  return Object.fromEntries(
    Object.entries(entries).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
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
  return { config: stackConfigFromText(text, file, projectIn(dir)), file, text };
}

/**
 * Validates the text of a `Pulumi.<stack>.yaml` (read from a file, or from git by `ray-gpu diff`) with `project`'s
 * config merged in: by default the `Pulumi.yaml` beside `file` when `file` is a file on disk, else none (a caller
 * reading a stack file from elsewhere passes its project: {@link projectFromText}).
 */
export function stackConfigFromText(
  text: string,
  file: string,
  project: ProjectFile = existsSync(file) ? projectIn(dirname(file)) : DEFAULT_PROJECT,
): StackConfig {
  const { entries, origin } = configMapOf(text, file, project);
  const config = namingProjectKeys(origin, file, () => parseStackConfig(namespaceKeys(entries), file));
  const problems = secretKeyProblems(config, entries);
  if (problems.length > 0) throw new ConfigError(problems, file);
  return config;
}

/** Runs `fn`; the problems of `ray-gpu:` keys that came from `Pulumi.yaml` are named with that file. */
function namingProjectKeys<T>(origin: Readonly<Record<string, string>>, file: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    const from = (path: string) => origin[/^[^.[]*/.exec(path)![0]] ?? file;
    const issues = e.issues.map((i) => (from(i.path) === file ? i : { ...i, path: `${from(i.path)}: ${i.path}` }));
    throw new ConfigError(issues, e.source);
  }
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
