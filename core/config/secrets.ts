/**
 * Secret-looking environment values: names and values that must not be written as plain `env` (they would land in
 * the rendered RayJob, `plan.json` and Pulumi's state in clear text). They belong in a workload's `secretEnv`, whose
 * schema is here too.
 */
import { z } from "zod";
import { dnsLabel } from "./platform";

/**
 * Names that say "secret", as a whole `_`-separated part: `HF_TOKEN`, `WANDB_API_KEY`, `DB_PASSWORD`; not
 * `TOKENIZERS_PARALLELISM`.
 */
const SECRET_NAME =
  /(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?|AUTH|AUTH_TOKEN)(_|$)/i;

/** A credential may sit anywhere in a text: not glued to letters or digits on either side. */
const inText = (body: string) => new RegExp(`(?<![A-Za-z0-9])(?:${body})(?![A-Za-z0-9])`);

/** Prefixes and shapes of well-known credentials, by issuer (with its article), found anywhere in a value or a command line. */
const SECRET_VALUES: readonly { readonly issuer: string; readonly pattern: RegExp }[] = [
  { issuer: "a Hugging Face token", pattern: inText("hf_[A-Za-z0-9]{20,}") },
  { issuer: "an OpenAI-style API key", pattern: inText("sk-[A-Za-z0-9_-]{20,}") },
  {
    issuer: "a GitHub token",
    pattern: inText("(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"),
  },
  { issuer: "a GitLab token", pattern: inText("glpat-[A-Za-z0-9_-]{20,}") },
  { issuer: "a Slack token", pattern: inText("xox[abprs]-[A-Za-z0-9-]{10,}") },
  { issuer: "an AWS access key id", pattern: inText("(?:AKIA|ASIA)[A-Z0-9]{16}") },
  { issuer: "a private key", pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { issuer: "a JSON Web Token", pattern: inText("eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}") },
  { issuer: "a bearer credential", pattern: /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/i },
  { issuer: "a URL with a password", pattern: /[a-z][a-z0-9+.-]*:\/\/[^\s/@:]+:[^\s/@]+@/i },
];

/** Which credential a text holds, by issuer, or undefined. */
export function credentialIn(text: string): string | undefined {
  return SECRET_VALUES.find((s) => s.pattern.test(text))?.issuer;
}

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
  if (AWS_SECRET_KEY.test(value.trim())) return "its value looks like an AWS secret access key";
  if (SECRET_NAME.test(name) && value !== "") return `its name says it holds a secret`;
  if (KEY_NAME.test(name) && KEY_LIKE.test(value.trim()))
    return `its name says it is a key, and its value looks like one`;
  return undefined;
}

/**
 * A secret given on a command line: a credential anywhere in it, or a value after a flag named like a secret
 * (`--hf-token abc`, `--password=abc`; a `$VARIABLE` is fine: that is how a secretEnv value reaches a command).
 */
export function secretInCommand(command: string): string | undefined {
  const issuer = credentialIn(command);
  if (issuer) return `it holds ${issuer}`;
  const flag =
    /(?:^|\s)(--?(?:[A-Za-z0-9]+-)*(?:token|password|passwd|secret|api-?key|access-?key))(?:=|\s+)(["']?)([^\s"']+)\2/i.exec(
      command,
    );
  if (flag && !flag[3]!.startsWith("$")) return `it gives ${flag[1]} a value in clear text`;
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

/**
 * Plain variables, refusing values that look like secrets (see `secretEnv`).
 * @internal
 */
export const plainEnv = <K extends z.ZodType<string>>(name: K) =>
  z.record(name, z.string()).superRefine((vars, ctx) => {
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
    secretName: dnsLabel(253),
    /** Key of that Secret. */
    key: z.string().regex(/^[-._a-zA-Z0-9]+$/, "must be a Secret data key (letters, digits, '-', '_', '.')"),
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
