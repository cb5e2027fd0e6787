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

/** Prefixes and shapes of well-known credentials, by issuer. */
const SECRET_VALUES: readonly { readonly issuer: string; readonly pattern: RegExp }[] = [
  { issuer: "Hugging Face token", pattern: /^hf_[A-Za-z0-9]{20,}$/ },
  { issuer: "OpenAI-style API key", pattern: /^sk-[A-Za-z0-9_-]{20,}$/ },
  { issuer: "GitHub token", pattern: /^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}$|^github_pat_[A-Za-z0-9_]{30,}$/ },
  { issuer: "GitLab token", pattern: /^glpat-[A-Za-z0-9_-]{20,}$/ },
  { issuer: "Slack token", pattern: /^xox[abprs]-[A-Za-z0-9-]{10,}$/ },
  { issuer: "AWS access key id", pattern: /^(AKIA|ASIA)[A-Z0-9]{16}$/ },
  { issuer: "private key", pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
];

/** Why `name=value` looks like a secret, or undefined. */
export function secretLooking(name: string, value: string): string | undefined {
  const issuer = SECRET_VALUES.find((s) => s.pattern.test(value.trim()));
  if (issuer) return `its value looks like a ${issuer.issuer}`;
  if (SECRET_NAME.test(name) && value !== "") return `its name says it holds a secret`;
  return undefined;
}

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
