/**
 * Environment variables that weaken what a job trusts, in one table: those that turn TLS checks off or move where AWS
 * credentials come from are refused in a workload's `env`, `runtimeEnv.envVars` and `secretEnv`; those that send pip,
 * the model hub, S3 or every request somewhere else are allowed over HTTPS only, and `ray-gpu plan` shows them.
 * Names match in any case (`https_proxy` is what curl and requests read first).
 */
import { httpsUrlProblem } from "./observability";

/**
 * What a rule does: refuse the variable; allow it only as an HTTPS URL without a credential; or, for a proxy, an HTTP
 * or HTTPS URL without a credential (most proxies are reached over http://, and requests to https:// hosts still go
 * through them as a CONNECT tunnel whose TLS the job verifies end to end).
 */
export type EnvRuleClass = "refuse" | "https-only" | "proxy";

/**
 * Which values a `refuse` rule refuses: any value; a false-ish one (`0`, `false`, `no`, `off`, empty: the value
 * that turns a check off); or a CA bundle other than the system store's (a bundle replaces the trust roots).
 */
export type EnvRefusedValue = "any" | "false-ish" | "not-system-ca";

/** One rule: a name (or prefix), its class, why, and where the variable is documented. */
export interface EnvRule {
  /** The name, or the prefix when `prefix` is true; matched in any case. */
  readonly name: string;
  readonly prefix?: true;
  readonly class: EnvRuleClass;
  /** For `refuse`: which values. @default "any" */
  readonly refuses?: EnvRefusedValue;
  readonly reason: string;
  readonly source: string;
}

/** The system CA store of the images jobs run (Ubuntu's, in `rayproject/ray`; RHEL's and Alpine's for others). */
export const SYSTEM_CA_PATHS: readonly string[] = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/ssl/certs",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
];

const FALSE_ISH = /^\s*(0|false|no|off|)\s*$/i;

/** Whether a `refuse` rule's values include `value`, by kind. */
const REFUSED_VALUE: { readonly [K in EnvRefusedValue]: (value: string) => boolean } = {
  any: () => true,
  "false-ish": (value) => FALSE_ISH.test(value),
  "not-system-ca": (value) => !SYSTEM_CA_PATHS.includes(value.trim()),
};

const TLS_OFF = "it turns TLS certificate checks off, so anyone on the path can serve the job code or data";
const CA_ELSEWHERE =
  "it replaces the trust roots with another bundle, which may trust any certificate; add a private CA to the " +
  `image's system store (update-ca-certificates) instead, or point at it (${SYSTEM_CA_PATHS[0]})`;
const CREDENTIALS_MOVED =
  "it moves where the AWS SDKs fetch credentials from: the job would send its Pod Identity token to, or take its " +
  "role from, another address (EKS Pod Identity sets these itself)";
const BOTOCORE =
  "botocore credentials.py ContainerProvider, utils.py InstanceMetadataFetcher; AWS SDKs and Tools " +
  "Reference Guide, Container credential provider and IMDS credential provider";
const REDIRECT = "it sends downloads elsewhere; the plan shows where";

/** Every rule, refusals first. */
export const ENV_RULES: readonly EnvRule[] = [
  {
    name: "PYTHONHTTPSVERIFY",
    class: "refuse",
    refuses: "false-ish",
    reason: TLS_OFF,
    source: "PEP 493 (PYTHONHTTPSVERIFY=0 turns off Python's default certificate checks)",
  },
  {
    name: "NODE_TLS_REJECT_UNAUTHORIZED",
    class: "refuse",
    refuses: "false-ish",
    reason: TLS_OFF,
    source: "Node.js CLI docs, NODE_TLS_REJECT_UNAUTHORIZED",
  },
  { name: "GIT_SSL_NO_VERIFY", class: "refuse", reason: TLS_OFF, source: "git docs, git-config http.sslVerify" },
  {
    name: "PIP_TRUSTED_HOST",
    class: "refuse",
    reason: `${TLS_OFF} for pip's hosts`,
    source: "pip docs, --trusted-host (PIP_<OPTION> environment variables)",
  },
  {
    name: "UV_INSECURE_HOST",
    class: "refuse",
    reason: `${TLS_OFF} for uv's hosts`,
    source: "uv docs, UV_INSECURE_HOST",
  },
  ...["PIP_CERT", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "AWS_CA_BUNDLE"].map(
    (name): EnvRule => ({
      name,
      class: "refuse",
      refuses: "not-system-ca",
      reason: CA_ELSEWHERE,
      source: "pip --cert; requests docs, CA certificates; OpenSSL SSL_CERT_FILE/SSL_CERT_DIR; AWS CLI AWS_CA_BUNDLE",
    }),
  ),
  ...[
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
  ].map((name): EnvRule => ({ name, class: "refuse", reason: CREDENTIALS_MOVED, source: BOTOCORE })),
  {
    name: "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    prefix: true,
    class: "refuse",
    reason: CREDENTIALS_MOVED,
    source: BOTOCORE,
  },
  ...["PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"].map((name): EnvRule => ({
    name,
    class: "https-only",
    reason: REDIRECT,
    source: "pip docs, --index-url",
  })),
  ...["UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_FIND_LINKS"].map((name): EnvRule => ({
    name,
    class: "https-only",
    reason: REDIRECT,
    source: "uv docs, environment variables",
  })),
  { name: "HF_ENDPOINT", class: "https-only", reason: REDIRECT, source: "huggingface_hub docs, HF_ENDPOINT" },
  {
    name: "AWS_ENDPOINT_URL",
    prefix: true,
    class: "https-only",
    reason: REDIRECT,
    source:
      "AWS SDKs and Tools Reference Guide, Service-specific endpoints (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_<SERVICE>)",
  },
  ...["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"].map((name): EnvRule => ({
    name,
    class: "proxy",
    reason: "every request goes through the proxy; the plan shows which",
    source: "requests docs, Proxies; curl docs, ENVIRONMENT",
  })),
];

/** The rule of `name`, matched in any case, or undefined. */
export function envRule(name: string): EnvRule | undefined {
  const upper = name.toUpperCase();
  return ENV_RULES.find((r) => (r.prefix ? upper.startsWith(r.name) : upper === r.name));
}

/** A problem with one variable: the message, and whether its value may not be echoed. */
export interface EnvRuleProblem {
  readonly message: string;
  readonly redact: boolean;
}

/** The refusal of a rule, with its fix. */
function refusal(rule: EnvRule, where: "env" | "secretEnv"): string {
  const hidden = where === "secretEnv" ? " (a Secret hides it from review, not from the job)" : "";
  return `${rule.reason}${hidden}; remove it (${rule.source})`;
}

/**
 * Why a plain variable (`env`, `runtimeEnv.envVars`) is refused, or undefined: a `refuse` rule that refuses its value,
 * or an `https-only` one whose value (each whitespace-separated URL, as pip reads `PIP_EXTRA_INDEX_URL`) is not an
 * HTTPS URL without a credential.
 */
export function envRuleProblem(name: string, value: string): EnvRuleProblem | undefined {
  const rule = envRule(name);
  if (!rule) return undefined;
  if (rule.class === "refuse")
    return REFUSED_VALUE[rule.refuses ?? "any"](value) ? { message: refusal(rule, "env"), redact: false } : undefined;
  const urls = value.trim().split(/\s+/);
  for (const url of urls) {
    // A proxy may be reached over http://: its address is judged as the same address over https://.
    const problem = httpsUrlProblem(rule.class === "proxy" ? url.replace(/^http:\/\//i, "https://") : url);
    if (problem?.kind === "credential")
      return {
        message:
          `${problem.why}, which the RayJob, plan.json and Pulumi's state would hold in clear text: give the URL ` +
          "alone, and the credential through secretEnv (pip reads PIP_INDEX_URL's user from ~/.netrc or a keyring)",
        redact: true,
      };
    const why =
      rule.class === "proxy"
        ? problem?.why.replace(/^must be https:\/\//, "must be http:// or https://")
        : problem?.why;
    if (why) return { message: `${why}: ${rule.reason} (${rule.source})`, redact: false };
  }
  return undefined;
}

/**
 * Why a `secretEnv` name is refused, or undefined: every rule's variable, `https-only` ones too, since a Secret's value
 * is not shown in the plan, and no rule's variable holds a secret.
 */
export function secretEnvRuleProblem(name: string): string | undefined {
  const rule = envRule(name);
  if (!rule) return undefined;
  if (rule.class === "refuse") return refusal(rule, "secretEnv");
  const scheme = rule.class === "proxy" ? "an http:// or https://" : "an https://";
  return `its value must be shown in the plan (${rule.reason}): set it in env as ${scheme} URL without a credential`;
}

/** The variables of `vars` that redirect downloads (`https-only` and `proxy` ones), as `NAME → value`, sorted. */
export function envRedirects(...vars: readonly (Readonly<Record<string, string>> | undefined)[]): string[] {
  const redirects = ([name]: [string, string]) => (envRule(name)?.class ?? "refuse") !== "refuse";
  const lines = vars.flatMap((v) => Object.entries(v ?? {}).filter(redirects));
  return [...new Set(lines.map(([name, value]) => `${name} → ${value.trim()}`))].sort();
}
