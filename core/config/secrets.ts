/**
 * Secret-looking environment values: names and values that must not be written as plain `env` (they would land in
 * the rendered RayJob, `plan.json` and Pulumi's state in clear text). They belong in a workload's `secretEnv`, whose
 * schema is here too.
 */
import { z } from "zod";
import { freeText } from "./free-text";
import { grammar } from "./grammars";
import { credentialIn } from "./secret-scan";
import { shellWords } from "./shell-words";

export { credentialIn } from "./secret-scan";

/**
 * Names that say "secret", as a whole `_`-separated part: `HF_TOKEN`, `WANDB_API_KEY`, `DB_PASSWORD`; not
 * `TOKENIZERS_PARALLELISM`.
 */
const SECRET_NAME =
  /(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH|AUTH_TOKEN)(_|$)/i;

/**
 * A whole value of 40 base64 characters with both cases and a digit, '/' or '+': an AWS secret access key under any
 * name (not a git SHA, which is hex). Checked on whole values only: inside a command line a path can look the same.
 */
const AWS_SECRET_KEY = /^(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9/+])[A-Za-z0-9/+]{40}$/;

/** A name with a `KEY` part (`WANDB_KEY`, `KEY_ID`) holding what looks like a key: one token of 20+ key characters. */
const KEY_NAME = /(^|_)KEY(_|$)/i;
const KEY_LIKE = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_+/=.-]{20,}$/;

/** Why `name=value` looks like a secret, or undefined. */
export function secretLooking(name: string, value: string): string | undefined {
  const issuer = credentialIn(value);
  if (issuer) return `its value holds ${issuer}`;
  const trimmed = value.trim();
  if (trimmed.length === 40 && AWS_SECRET_KEY.test(trimmed)) return "its value looks like an AWS secret access key";
  if (SECRET_NAME.test(name) && value !== "") return `its name says it holds a secret`;
  if (KEY_NAME.test(name) && trimmed.length >= 20 && KEY_LIKE.test(trimmed))
    return `its name says it is a key, and its value looks like one`;
  return undefined;
}

/** The words a flag's or header's name ends in when it carries a secret (`--hf_token`, `--secret-key`, `X-Api-Key`). */
const SECRET_ENDINGS: readonly (readonly string[])[] = [
  ["token"],
  ["password"],
  ["passwd"],
  ["secret"],
  ["apikey"],
  ["accesskey"],
  ["credentials"],
  ["api", "key"],
  ["access", "key"],
  ["secret", "key"],
  ["private", "key"],
];

/** Whether a flag or header name (`--hf-token`, `secret_key`, `X-Api-Key`) says it carries a secret. */
function secretName(name: string): boolean {
  // Only the last parts decide (an ending is at most 12 characters): read the name's last 40 characters, less the
  // first part when that was cut.
  const tail = name.slice(-40).toLowerCase().split(/[-_]+/);
  const parts = (name.length > 40 ? tail.slice(1) : tail).filter(Boolean);
  return SECRET_ENDINGS.some((end) => end.every((p, k) => parts[parts.length - end.length + k] === p));
}

/** A value given in clear text: not empty, and not a variable the shell expands (`$HF_TOKEN`, `${HF_TOKEN}`). */
const clearText = (value: string | undefined) => value !== undefined && value !== "" && !value.startsWith("$");

/** A flag word's name and value (`--token=x`, or `--token` and the next word when that is not a flag). */
function flagValue(words: readonly string[], i: number): { name: string; value: string | undefined } | undefined {
  const m = /^(--?[A-Za-z0-9][A-Za-z0-9_-]*)(?:=([^]*))?$/.exec(words[i]!);
  if (!m) return undefined;
  const next = words[i + 1];
  return { name: m[1]!, value: m[2] ?? (next !== undefined && !next.startsWith("-") ? next : undefined) };
}

/** An HTTP header word (`Authorization: Bearer x`, or `X-Api-Key:` and the next word) whose credential is clear text. */
function headerSecret(words: readonly string[], i: number): string | undefined {
  const m = /^([A-Za-z0-9][A-Za-z0-9-]*):(.*)$/s.exec(words[i]!);
  if (!m) return undefined;
  const name = m[1]!;
  const auth = /^(proxy-)?authorization$/i.test(name);
  if (!auth && !secretName(name)) return undefined;
  const value = m[2]!.trim() === "" ? words.slice(i + 1, i + (auth ? 3 : 2)).join(" ") : m[2]!.trim();
  const parts = value.split(/\s+/);
  const credential = auth && parts.length > 1 ? parts[1] : parts[0];
  return clearText(credential) ? `it gives the ${name} header a credential in clear text` : undefined;
}

/**
 * A secret given on a command line, read as the shell splits it into words (quotes removed): a credential anywhere in
 * it; a value after a flag named like a secret (`--hf-token abc`, `--secret_key=abc`, `--password "a b"`); an HTTP
 * header carrying one (`-H 'Authorization: Basic ...'`, `X-Api-Key: ...`); or a secret-looking `NAME=value`
 * assignment. A `$VARIABLE` value is fine: that is how a secretEnv value reaches a command. Linear in its length.
 */
export function secretInCommand(command: string): string | undefined {
  const issuer = credentialIn(command);
  if (issuer) return `it holds ${issuer}`;
  const words = shellWords(command);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const flag = word.startsWith("-") ? flagValue(words, i) : undefined;
    if (flag && secretName(flag.name.replace(/^-+/, "")) && clearText(flag.value))
      return `it gives ${flag.name} a value in clear text`;
    const header = word.includes(":") ? headerSecret(words, i) : undefined;
    if (header) return header;
    const assignment = word.includes("=") ? /^([A-Za-z_][A-Za-z0-9_]*)=([^]*)$/.exec(word) : null;
    if (assignment && clearText(assignment[2])) {
      const why = secretLooking(assignment[1]!, assignment[2]!);
      if (why) return `it sets ${assignment[1]} in clear text, and ${why}`;
    }
  }
  return undefined;
}

/** The message for a secret on the entrypoint's command line. */
export const SECRET_COMMAND_FIX =
  "the entrypoint is written in clear text to the RayJob, plan.json and Pulumi's state: put the secret in secretEnv " +
  "and pass it as an environment variable (e.g. --hf-token $HF_TOKEN, or read it in the program)";

/** The message for a secret-looking plain variable, pointing at the field that keeps it secret. */
export const SECRET_ENV_FIX =
  "plain env values are written in clear text to the RayJob, plan.json and Pulumi's state: move it to secretEnv " +
  "(a Kubernetes Secret by name, or a Pulumi secret config key), which renders a secretKeyRef";

/** Why a plain variable's value is free text. */
const PLAIN_ENV_VALUE =
  "an environment variable's value is whatever the program reads; the map's check refuses values that look like " +
  "secrets";

/**
 * Plain variables, refusing values that look like secrets (see `secretEnv`).
 * @internal
 */
export const plainEnv = <K extends z.ZodType<string>>(name: K) =>
  z.record(name, freeText(z.string(), PLAIN_ENV_VALUE)).superRefine((vars, ctx) => {
    for (const [key, value] of Object.entries(vars)) {
      const why = secretLooking(key, value);
      if (why)
        ctx.addIssue({ code: "custom", path: [key], message: `${why}: ${SECRET_ENV_FIX}`, params: { redact: true } });
    }
  });

/**
 * Where a secret variable's value comes from: an existing Secret of the namespace, or a Pulumi secret config key.
 * @internal
 */
export const SecretEnvSourceSchema = z.union([
  z.strictObject({
    /** Name of an existing Secret in the workload namespace. */
    secretName: grammar("rfc1123Subdomain"),
    /** Key of that Secret. */
    key: grammar("secretDataKey"),
  }),
  z.strictObject({
    /**
     * A Pulumi config key of this stack holding the value as a secret (`pulumi config set --secret
     * ray-gpu-secrets:hfToken ...`, named here `hfToken`; or `namespace:key`); the stack creates the Secret
     * `<workload>-secrets` from it.
     */
    pulumiConfig: z.string().regex(/^[A-Za-z][A-Za-z0-9_.:-]*$/, "must be a Pulumi config key"),
  }),
]);
