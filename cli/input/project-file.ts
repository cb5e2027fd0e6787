/**
 * `Pulumi.yaml`'s project-level `config:` block, read and merged into a stack's config as Pulumi does, so that
 * `plan` sees the values `pulumi up` hands the program. The rules come from pulumi/pulumi:
 * sdk/go/common/workspace/project.json (the schema: each entry is text, an integer, a boolean, a list, or a
 * declaration `{type, items, description, secret, default, value}`), project.go (`RewriteShorthandConfigValues`: a
 * plain entry is the `default` of a project key, or the `value` of another namespace's key such as `aws:region`;
 * `Project.Validate`), and pkg/workspace/config.go (`mergeConfig`: a key the stack file sets wins; otherwise the
 * project's default or value is used; a project key with neither must be set by every stack; a typed key's value
 * must be of its type, and a `secret: true` key must be encrypted).
 */
import { ConfigError, type ConfigIssue } from "../../core/errors";
import { CONFIG_NAMESPACE } from "../../core/config/stack";
import { parsePulumiYamlText } from "./pulumi-yaml";

/** A project config entry after the shorthand rewrite. */
export interface ConfigDeclaration {
  readonly type?: string;
  readonly items?: ItemsType;
  readonly description?: string;
  readonly secret?: boolean;
  readonly default?: unknown;
  readonly value?: unknown;
}

/** `items` of an array declaration: the items' type, and theirs for nested arrays. */
interface ItemsType {
  readonly type: string;
  readonly items?: ItemsType;
}

/** A read and validated `Pulumi.yaml`. */
export interface ProjectFile {
  /** Where it was read from, named in messages. */
  readonly file: string;
  /** The project's name: the namespace of stack keys written without one. */
  readonly name: string;
  /** Its `config:` entries, keyed as written. */
  readonly config: ReadonlyMap<string, ConfigDeclaration>;
}

/** The project a folder without `Pulumi.yaml` stands for: this package's, with no project config. */
export const DEFAULT_PROJECT: ProjectFile = { file: "Pulumi.yaml", name: CONFIG_NAMESPACE, config: new Map() };

/** project.json's `simpleConfigType`. */
const TYPES = ["string", "integer", "boolean", "array", "object"] as const;
const DECLARATION_KEYS = ["type", "items", "description", "secret", "default", "value"] as const;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** Whether `key` belongs to the project (no namespace, or the project's own): project.go's configKeyIsNamespacedByProject. */
export const isProjectKey = (project: string, key: string) => !key.includes(":") || key.startsWith(`${project}:`);

/** The full `<namespace>:<name>` of a key, the project's namespace when it has none (config.go's parseConfigKey). */
export const fullKey = (project: string, key: string) => (key.includes(":") ? key : `${project}:${key}`);

/** Problems of an `items` declaration (project.json's configItemsType). */
function itemsIssues(items: unknown, path: string): ConfigIssue[] {
  if (!isObject(items) || typeof items["type"] !== "string" || !TYPES.includes(items["type"] as never))
    return [{ path, message: `needs a type, one of ${TYPES.join(", ")}`, value: items }];
  if (items["type"] === "array" && items["items"] === undefined)
    return [{ path, message: "an array type needs items: {type: ...}" }];
  return items["items"] === undefined ? [] : itemsIssues(items["items"], `${path}.items`);
}

/** Problems of one entry, as project.json and Project.Validate see them, and its declaration. */
function declaration(project: string, key: string, raw: unknown, path: string) {
  const plain = typeof raw === "string" || typeof raw === "boolean" || Number.isInteger(raw) || Array.isArray(raw);
  if (plain) return { decl: isProjectKey(project, key) ? { default: raw } : { value: raw }, issues: [] };
  if (!isObject(raw)) {
    const message = "must be text, an integer, a boolean, a list, or {type, default, value, description, secret}";
    return { decl: {}, issues: [{ path, message, value: raw }] };
  }
  const d = raw as ConfigDeclaration;
  const issue = (message: string) => [{ path, message }];
  const issues: ConfigIssue[] = [
    ...Object.keys(raw)
      .filter((k) => !DECLARATION_KEYS.includes(k as never))
      .flatMap((k) => issue(`unknown attribute ${k}: the attributes are ${DECLARATION_KEYS.join(", ")}`)),
    ...(d.type !== undefined && !TYPES.includes(d.type as never)
      ? issue(`type must be one of ${TYPES.join(", ")}`)
      : []),
    ...(d.description !== undefined && typeof d.description !== "string" ? issue("description must be text") : []),
    ...(d.secret !== undefined && typeof d.secret !== "boolean" ? issue("secret must be true or false") : []),
    ...(d.default !== undefined && d.value !== undefined ? issue("cannot have both a default and a value") : []),
  ];
  if (d.items !== undefined) issues.push(...itemsIssues(d.items, `${path}.items`));
  if (isProjectKey(project, key)) {
    if (d.type === "array" && d.items === undefined) issues.push(...issue("declares an array without its items' type"));
    if (d.type !== undefined && d.default !== undefined && !typeAccepts(d.type, d.items, d.default))
      issues.push(...issue(`the default is not of the declared type ${d.type}`));
  } else {
    // Another namespace's key (aws:region): a value, never a type or a default (Project.Validate).
    if (d.type !== undefined) issues.push(...issue("is not the project's key, so it cannot declare a type"));
    if (d.default !== undefined) issues.push(...issue("is not the project's key: give it a value, not a default"));
    if (d.value === undefined && d.default === undefined)
      issues.push(...issue("is not the project's key: give it a value"));
  }
  return { decl: d, issues };
}

/** project.go's ValidateConfigValue: whether Pulumi's view of a value (text, or decoded JSON) is of `type`. */
export function typeAccepts(type: string, items: ItemsType | undefined, content: unknown): boolean {
  switch (type) {
    case "string":
      return typeof content === "string";
    case "integer":
      if (typeof content === "number") return Number.isInteger(content);
      return typeof content === "string" && /^[+-]?\d+$/.test(content) && BigInt(content) < 2n ** 63n; // Go's Atoi
    case "boolean":
      return typeof content === "boolean" || content === "true" || content === "false";
    case "object":
      return isObject(content);
    default:
      return (
        Array.isArray(content) && items !== undefined && content.every((c) => typeAccepts(items.type, items.items, c))
      );
  }
}

/** Reads `Pulumi.yaml`'s text: its name and its `config:` entries. @throws ConfigError listing every problem */
export function projectFromText(text: string, file: string): ProjectFile {
  const doc = parsePulumiYamlText(text, file);
  const raw = isObject(doc) ? doc : {};
  const issues: ConfigIssue[] = [];
  const name = raw["name"];
  if (typeof name !== "string" || name === "")
    issues.push({ path: `${file}: name`, message: "Pulumi needs a non-empty project name", value: name });
  const config = raw["config"] ?? {};
  const where = typeof config === "string" ? "config" : raw["stackConfigDir"] !== undefined ? "stackConfigDir" : "";
  if (where)
    issues.push({
      path: `${file}: ${where}`,
      message: "moves the stack files elsewhere; ray-gpu reads Pulumi.<stack>.yaml beside Pulumi.yaml, so drop it",
    });
  const entries = isObject(config) ? Object.entries(config) : [];
  if (!isObject(config) && !where)
    issues.push({ path: `${file}: config`, message: "must be a map of keys", value: config });
  const declared = entries.map(([key, value]) => {
    const path = `${file}: config.${key}`;
    const found = declaration(String(name), key, value, path);
    if (/[.[]/.test(key.slice(key.indexOf(":") + 1)))
      found.issues.push({ path, message: "a key with . or [ is a path into an object; write the whole object" });
    issues.push(...found.issues);
    return [key, found.decl] as const;
  });
  if (issues.length > 0) throw new ConfigError(issues, file);
  return { file, name: String(name), config: new Map(declared) };
}
