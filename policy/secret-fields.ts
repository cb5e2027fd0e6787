/**
 * Secrets in clear text in any field of a KubeRay resource that reaches a pod: a container's `env` values, `command`
 * and `args`; a secret-looking variable or `envFrom` read from a ConfigMap (which is not encrypted like a Secret and is
 * readable by whoever reads ConfigMaps); a RayJob's `entrypoint` and `runtimeEnvYAML` (its `env_vars`, and
 * credentials in any of its strings: a `pip` URL with a password); a RayService's `serveConfigV2` (the same, per
 * application). The scanners are the core's (`core/config/secrets.ts`, `secret-scan.ts`, `shell-words.ts`). Pure.
 */
import { parse } from "yaml";
import { credentialIn, secretInCommand, secretLooking } from "../core/config/secrets";
import { arr, obj, type Obj, type PolicyInput } from "./inputs";
import { rayContainers, rayKindOf } from "./ray-pods";

/** A clear-text secret: the field path, what is there, the fix. */
export type SecretFinding = readonly [path: string, problem: string, fix: string];

const SECRET_REF = "use valueFrom.secretKeyRef";
const IN_STATE = "in clear text in the manifest and Pulumi's state";

/** A ConfigMap name or key that says it holds a secret (`hf-token`, `db_password`, `api-credentials`). */
const secretName = (name: string) => secretLooking(name.replace(/[-.]/g, "_").toUpperCase(), "(from a ConfigMap)");

/** A word list as one shell command line, each word single-quoted, for the command-line scanner. */
const quoted = (words: readonly unknown[]) => words.map((w) => `'${String(w).replace(/'/g, `'\\''`)}'`).join(" ");

/** Secrets in one container: env values, env and envFrom read from ConfigMaps, command and args. */
function containerSecrets(path: string, c: Obj): SecretFinding[] {
  const env = arr(c["env"]).flatMap((e, i): SecretFinding[] => {
    const { name, value, valueFrom } = obj(e);
    if (typeof value === "string" && value !== "" && secretLooking(String(name), value) !== undefined)
      return [
        [`${path}.env[${i}].value`, `(${String(name)}) is a plain secret-looking value, ${IN_STATE}`, SECRET_REF],
      ];
    const fromMap = obj(obj(valueFrom)["configMapKeyRef"]);
    return Object.keys(fromMap).length && secretName(String(name))
      ? [
          [
            `${path}.env[${i}].valueFrom.configMapKeyRef`,
            `(${String(name)}) reads a secret from a ConfigMap`,
            SECRET_REF,
          ],
        ]
      : [];
  });
  const envFrom = arr(c["envFrom"]).flatMap((e, i): SecretFinding[] => {
    const map = String(obj(obj(e)["configMapRef"])["name"] ?? "");
    return map && secretName(map)
      ? [[`${path}.envFrom[${i}].configMapRef`, `reads ConfigMap ${map}, named as a secret`, "use envFrom.secretRef"]]
      : [];
  });
  const words = [...arr(c["command"]), ...arr(c["args"])];
  // The words as one command line, then each word that is a script of its own (`bash -c "..."`).
  const scripts = words.map(String).filter((w) => /\s/.test(w));
  const why = words.length
    ? (secretInCommand(quoted(words)) ?? scripts.map(secretInCommand).find((w) => w !== undefined))
    : undefined;
  const line = why
    ? [
        [
          `${path}.${c["args"] ? "args" : "command"}`,
          `${why}, ${IN_STATE}`,
          "pass it from a secretKeyRef variable",
        ] as const,
      ]
    : [];
  return [...env, ...envFrom, ...line];
}

/** Every string of a parsed YAML value, and each `env_vars` mapping's entries, with their paths. */
function walk(v: unknown, path: string, out: { strings: [string, string][]; vars: [string, string, string][] }): void {
  if (typeof v === "string") out.strings.push([path, v]);
  else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`, out));
  else if (v && typeof v === "object")
    for (const [k, x] of Object.entries(v as Obj)) {
      if (k === "env_vars" && x && typeof x === "object" && !Array.isArray(x))
        for (const [name, value] of Object.entries(x as Obj))
          out.vars.push([`${path}.env_vars.${name}`, name, String(value)]);
      else walk(x, `${path}.${k}`, out);
    }
}

/** Secrets in a Ray runtime-env or Serve config given as YAML text (unreadable YAML is scanned as text). */
function yamlSecrets(path: string, text: unknown): SecretFinding[] {
  if (typeof text !== "string" || text === "") return [];
  const fix = "put the secret in a Kubernetes Secret and read it in the pod (env valueFrom.secretKeyRef)";
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    const issuer = credentialIn(text);
    return issuer ? [[path, `holds ${issuer}, ${IN_STATE}`, fix]] : [];
  }
  const out = { strings: [] as [string, string][], vars: [] as [string, string, string][] };
  walk(doc, "", out);
  const vars = out.vars.flatMap(([at, name, value]): SecretFinding[] => {
    const why = secretLooking(name, value);
    return why ? [[`${path} (${at.slice(1)})`, `sets ${name} in clear text: ${why}`, fix]] : [];
  });
  const strings = out.strings.flatMap(([at, s]): SecretFinding[] => {
    const issuer = credentialIn(s);
    return issuer ? [[`${path} (${at.slice(1)})`, `holds ${issuer}, ${IN_STATE}`, fix]] : [];
  });
  return [...vars, ...strings];
}

/** Every clear-text secret of a KubeRay resource, in any field that reaches a pod. */
export function secretFindings(r: PolicyInput): SecretFinding[] {
  const spec = obj(r.props["spec"]);
  const kind = rayKindOf(r.type);
  const entrypoint = kind === "RayJob" && typeof spec["entrypoint"] === "string" ? spec["entrypoint"] : "";
  const why = entrypoint ? secretInCommand(entrypoint) : undefined;
  return [
    ...rayContainers(r).flatMap((c) => containerSecrets(c.path, c.value)),
    ...(why ? [["spec.entrypoint", `${why}, ${IN_STATE}`, "pass it as $VARIABLE from a secretKeyRef"] as const] : []),
    ...(kind === "RayJob" ? yamlSecrets("spec.runtimeEnvYAML", spec["runtimeEnvYAML"]) : []),
    ...(kind === "RayService" ? yamlSecrets("spec.serveConfigV2", spec["serveConfigV2"]) : []),
  ];
}
