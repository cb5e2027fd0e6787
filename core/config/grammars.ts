/**
 * The grammars of the names and addresses the stack config hands to AWS and Kubernetes, in one table: what a value
 * must match, the rule in words (the error message, after the config path and the value), and where the rule comes
 * from. A schema takes one with {@link grammar}; `./aws-rules.ts` keeps the rules a pattern cannot say (regions, EKS
 * versions, CIDRs, bucket names).
 */
import { z } from "zod";
import { bucketNameProblems } from "./aws-rules";

/** A grammar: the pattern, the rule it checks in words, the longest value, and the source of the rule. */
interface Grammar {
  readonly pattern: RegExp;
  readonly rule: string;
  readonly maxLength?: number;
  readonly source: string;
}

/** DNS-1123 label and subdomain, as Kubernetes writes them (`dns1123LabelFmt`, `dns1123SubdomainFmt`). */
const DNS1123_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";

/** The grammars, by name. */
export const GRAMMARS = {
  rfc1035Label: {
    pattern: /^[a-z]([-a-z0-9]*[a-z0-9])?$/,
    rule: "must be lowercase letters, digits and '-', start with a letter and not end with '-'",
    maxLength: 63,
    source: "k8s.io/apimachinery pkg/util/validation IsDNS1035Label",
  },
  rfc1123Subdomain: {
    pattern: new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`),
    rule:
      "must be a Kubernetes object name (DNS-1123 subdomain): lowercase letters, digits, '-' and '.', each " +
      "'.'-separated part starting and ending with a letter or digit, at most 253 characters",
    maxLength: 253,
    source: "k8s.io/apimachinery pkg/util/validation IsDNS1123Subdomain",
  },
  secretDataKey: {
    pattern: /^(?!\.\.)(?!\.$)[-._a-zA-Z0-9]+$/,
    rule: "must be a Secret data key: letters, digits, '-', '_' and '.', not '.' and not starting with '..'",
    maxLength: 253,
    source: "k8s.io/apimachinery pkg/util/validation IsConfigMapKey",
  },
  eksClusterName: {
    pattern: /^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$/,
    rule: "must be 1-100 letters, digits, '-' or '_', starting with a letter or digit",
    source: "EKS API reference, CreateCluster `name`",
  },
  availabilityZone: {
    pattern: /^[a-z]{2}(-gov)?-[a-z]+-\d[a-z]$/,
    rule: 'must be an availability zone name such as "us-east-1a"',
    source: "EC2 User Guide, Regions and Zones",
  },
  iamRoleArn: {
    // Role name [\w+=,.@-]{1,64}; path "/" or "/<printable ASCII>/" up to 512 (IAM API reference, Role).
    pattern: /^arn:aws:iam::\d{12}:role\/(?:[\x21-\x7E]{1,510}\/)?[\w+=,.@-]{1,64}$/,
    rule:
      "must be an IAM role ARN of the aws partition, arn:aws:iam::<12-digit account>:role/[<path>/]<name>, the " +
      "name 1-64 letters, digits or '+=,.@_-'",
    source: "IAM API reference, Role (RoleName, Path); EKS User Guide, Create access entries (paths allowed)",
  },
  s3KeyPrefix: {
    pattern: /^([a-z0-9][a-z0-9._-]*\/)*$/,
    rule: "must be empty or \"/\"-separated parts of lowercase letters, digits, '.', '_' and '-', ending with \"/\", e.g. \"ray/\"",
    maxLength: 1024,
    source: "Amazon S3 User Guide, Object key naming (safe characters; 1024 bytes at most)",
  },
  peftModuleName: {
    pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
    rule: "must be a module name such as q_proj: letters, digits and '_', not starting with a digit",
    source: "PEFT LoraConfig target_modules (module attribute names)",
  },
} as const satisfies Record<string, Grammar>;

/** A grammar's name. */
export type GrammarName = keyof typeof GRAMMARS;

/**
 * A string schema of the grammar `name`: its length limit, then its pattern.
 * @internal
 */
export function grammar(name: GrammarName): z.ZodString {
  const g: Grammar = GRAMMARS[name];
  const bounded = g.maxLength === undefined ? z.string() : z.string().max(g.maxLength);
  return bounded.regex(g.pattern, g.rule);
}

/** The longest S3 object key, in bytes (Amazon S3 User Guide, "Naming Amazon S3 objects"). */
const MAX_S3_KEY_BYTES = 1024;

/**
 * Why a data location is not `s3://<bucket>/<key>` (a valid bucket name, a key of at most 1024 bytes without control
 * characters), a path (`/…`) or `file://…`, or undefined.
 */
export function dataUriProblem(uri: string): string | undefined {
  if (uri.startsWith("/") || uri.startsWith("file://")) return undefined;
  const m = /^s3:\/\/([^/]*)\/(.*)$/s.exec(uri);
  if (!m) return 'must start with "s3://<bucket>/", "/" or "file://"';
  const bucket = bucketNameProblems(m[1]!);
  if (bucket.length > 0) return `names the bucket "${m[1]}", not a valid S3 bucket name: ${bucket.join("; ")}`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1F\x7F]/.test(m[2]!)) return "has a control character in its key; S3 keys are printable text";
  if (new TextEncoder().encode(m[2]!).length > MAX_S3_KEY_BYTES)
    return `has a key longer than ${MAX_S3_KEY_BYTES} bytes (S3's limit)`;
  return undefined;
}

/**
 * A workload's data location: {@link dataUriProblem}.
 * @internal
 */
export const DataUriSchema = z.string().superRefine((uri, ctx) => {
  const problem = dataUriProblem(uri);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
