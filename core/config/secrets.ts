/**
 * Secret-looking environment values: names and values that must not be written as plain `env` (they would land in
 * the rendered RayJob, `plan.json` and Pulumi's state in clear text). They belong in a workload's `secretEnv`.
 */

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
