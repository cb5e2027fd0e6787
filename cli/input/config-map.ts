/**
 * A stack's config map as Pulumi builds it for `pulumi up`: the stack file's `config:` keys (a key without a
 * namespace gets the project's: pulumi/pulumi sdk/go/common/workspace/loaders.go, stackConfigNamespacedWithProject),
 * then `Pulumi.yaml`'s project config merged in (pkg/workspace/config.go, mergeConfig; see project-file.ts), every
 * encrypted value checked for the shape `pulumi config set --secret` writes, and `aws:region` compared with
 * `ray-gpu:region`.
 */
import { CONFIG_NAMESPACE } from "../../core/config/stack";
import { ConfigError, type ConfigIssue } from "../../core/errors";
import { fullKey, typeAccepts, type ProjectFile } from "./project-file";

/** A stack's merged config: every key in full (`<namespace>:<name>`), and the file each came from. */
export interface ConfigMap {
  readonly entries: Readonly<Record<string, unknown>>;
  /** The file a key was read from: the stack file, or `Pulumi.yaml` for a project default or value. */
  readonly origin: Readonly<Record<string, string>>;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** A config path, named with its file when that is not the stack file (the message's header names the stack file). */
const named = (from: string, stackFile: string, path: string) => (from === stackFile ? path : `${from}: ${path}`);

/** Standard base64, as Go's base64.StdEncoding writes it (padded, no line breaks). */
const B64 = "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?";
/**
 * Ciphertexts `pulumi config set --secret` writes: `v1:<nonce>:<ciphertext>` for the passphrase and cloud KMS
 * providers (pulumi/pulumi sdk/go/common/resource/config/crypt.go, symmetricCrypter.EncryptValue) and plain base64 for
 * the Pulumi Cloud service (pkg/secrets/service/manager.go).
 */
const CIPHERTEXT = new RegExp(`^(?:v1:(?!:)${B64}:(?!$)${B64}|(?!$)${B64})$`);

/** What is wrong with a map holding `secure`, or undefined for one ciphertext alone (never echoing what it holds). */
function secureProblem(value: Record<string, unknown>, key: string): string | undefined {
  const again = `run pulumi config set --secret ${key} <value> again`;
  const others = Object.keys(value).filter((k) => k !== "secure");
  if (others.length > 0)
    return (
      `holds secure with other keys (${others.join(", ")}), which Pulumi reads as a plain object, not an encrypted ` +
      `value; keep secure alone`
    );
  const secure = value["secure"];
  if (typeof secure !== "string" || secure === "") {
    const got = secure === "" ? "empty text" : secure === null ? "null" : `a ${typeof secure}`;
    return `secure must hold the ciphertext pulumi config set --secret writes, not ${got}; ${again}`;
  }
  if (CIPHERTEXT.test(secure)) return undefined;
  return (
    `secure is not a ciphertext pulumi config set --secret writes (v1:<base64>:<base64>, or base64), so pulumi up ` +
    `could not decrypt it; ${again}`
  );
}

/** Every `{secure: ...}` in a value that is not one ciphertext alone. */
function secureIssues(value: unknown, path: string, key = path): ConfigIssue[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => secureIssues(v, `${path}[${i}]`, key));
  if (!isObject(value)) return [];
  if (!("secure" in value)) return Object.entries(value).flatMap(([k, v]) => secureIssues(v, `${path}.${k}`, key));
  const message = secureProblem(value, key);
  return message ? [{ path, message }] : [];
}

/** The stack file's keys in full; a key given both with and without the namespace, or with two colons, is refused. */
function stackEntries(config: Record<string, unknown>, project: ProjectFile, file: string) {
  const entries: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  for (const [key, value] of Object.entries(config)) {
    const full = fullKey(project.name, key);
    if (key.split(":").length > 2)
      issues.push({ path: key, message: "a config key is <namespace>:<name>, with one colon" });
    else if (full in entries)
      issues.push({
        path: key,
        message: `is ${full}, which this file also sets; Pulumi would keep either, so keep one`,
      });
    entries[full] = value;
  }
  if (issues.length > 0) throw new ConfigError(issues, file);
  return entries;
}

/** Pulumi's view of a value for a type check: text for a plain value, the JSON value for an object or list. */
const pulumiContent = (v: unknown) =>
  v !== null && typeof v === "object" ? v : typeof v === "string" ? v : JSON.stringify(v);

/** Merges the project config in, as mergeConfig does; returns the issues of the project's keys. */
function mergeProject(
  { entries, origin }: { entries: Record<string, unknown>; origin: Record<string, string> },
  project: ProjectFile,
  stack: string,
  stackFile: string,
) {
  const issues: ConfigIssue[] = [];
  const missing: string[] = [];
  for (const [key, decl] of [...project.config].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const full = fullKey(project.name, key);
    const given = decl.default ?? decl.value;
    if (!(full in entries) && given === undefined && full.startsWith(`${project.name}:`)) missing.push(key);
    else if (!(full in entries)) [entries[full], origin[full]] = [given, project.file];
  }
  if (missing.length > 0)
    issues.push({ path: `${project.file}: config`, message: missingConfigMessage(missing, stack) });
  for (const [key, decl] of project.config) {
    const value = entries[fullKey(project.name, key)];
    if (value === undefined || decl.type === undefined) continue;
    const secure = isObject(value) && "secure" in value;
    const where = named(origin[fullKey(project.name, key)]!, stackFile, key);
    if (decl.secret && !secure)
      issues.push({
        path: where,
        message: `${project.file} declares it secret: store it with pulumi config set --secret`,
      });
    if (!secure && !typeAccepts(decl.type, decl.items, pulumiContent(value)))
      issues.push({ path: where, message: `${project.file} declares it of type ${decl.type}` });
  }
  return issues;
}

/**
 * The config map Pulumi builds for `stack` from its file's parsed document and the project.
 * @throws ConfigError listing every problem: the stack file's, the project config's, and every bad secure value.
 */
export function stackConfigMap(doc: unknown, file: string, stack: string, project: ProjectFile): ConfigMap {
  const config = isObject(doc) ? doc["config"] : undefined;
  const projectSets = [...project.config.keys()].some((k) =>
    fullKey(project.name, k).startsWith(`${CONFIG_NAMESPACE}:`),
  );
  if (!isObject(config) && !(config == null && projectSets))
    throw new ConfigError(
      [{ path: `${file}: config`, message: "the file needs a `config:` map with the ray-gpu: keys" }],
      file,
    );
  const entries = stackEntries(config ?? {}, project, file);
  const origin: Record<string, string> = Object.fromEntries(Object.keys(entries).map((k) => [k, file]));
  const issues = mergeProject({ entries, origin }, project, stack, file);
  for (const [key, value] of Object.entries(entries))
    issues.push(...secureIssues(value, key).map((i) => ({ ...i, path: named(origin[key]!, file, i.path) })));
  const [region, awsRegion] = [entries[`${CONFIG_NAMESPACE}:region`], entries["aws:region"]];
  if (awsRegion !== undefined && region !== undefined && awsRegion !== region)
    issues.push({
      path: named(origin["aws:region"]!, file, "aws:region"),
      message:
        `differs from ray-gpu:region (${JSON.stringify(region)}); the stack uses ray-gpu:region, ` +
        `so drop aws:region or make them equal`,
      value: awsRegion,
    });
  if (issues.length > 0) throw new ConfigError(issues, file);
  return { entries, origin };
}

/** Why declarations without a default fail every stack that does not set them, as Pulumi says it. */
function missingConfigMessage(missing: readonly string[], stack: string): string {
  const [them, s] = missing.length > 1 ? ["them", "s"] : ["it", ""];
  const pulumi = `Pulumi stops with "Stack '${stack}' is missing configuration value${s}"`;
  const fix = `set ${them} in this stack file or give a default`;
  return `declares ${missing.join(", ")} without a default, so every stack must set ${them}: ${pulumi}; ${fix}`;
}
