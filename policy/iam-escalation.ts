/**
 * Actions that escalate privilege or open keys and secrets, and when a statement grants them too widely: on every
 * resource (`Resource: "*"`, `NotResource`) or on a wildcard of every account or every role, key, user or secret
 * (`arn:aws:iam::*:role/x`, `arn:aws:iam::123456789012:role/*`). Named exactly (`iam:PassRole`, any case: IAM action
 * names are case-insensitive) or by a pattern (`iam:Pass*`, `sts:Assume*`). Sources: AWS IAM User Guide, "IAM JSON
 * policy elements: Action" and "Grant a user permissions to pass a role to an AWS service"; Rhino Security Labs, "AWS
 * IAM Privilege Escalation – Methods and Mitigation" (the iam: and sts: methods). Pure.
 */
import { list, type Obj } from "./inputs";

/** An action that is dangerous when granted on every resource. */
type SensitiveAction =
  | "iam:PassRole"
  | "sts:AssumeRole"
  | "sts:AssumeRoleWithWebIdentity"
  | "sts:AssumeRoleWithSAML"
  | "sts:AssumeRoot"
  | "sts:TagSession"
  | "iam:CreatePolicyVersion"
  | "iam:SetDefaultPolicyVersion"
  | "iam:AttachRolePolicy"
  | "iam:AttachUserPolicy"
  | "iam:AttachGroupPolicy"
  | "iam:PutRolePolicy"
  | "iam:PutUserPolicy"
  | "iam:PutGroupPolicy"
  | "iam:UpdateAssumeRolePolicy"
  | "iam:CreateAccessKey"
  | "iam:CreateLoginProfile"
  | "iam:UpdateLoginProfile"
  | "iam:AddUserToGroup"
  | "kms:Decrypt"
  | "kms:ReEncryptFrom"
  | "kms:GenerateDataKey"
  | "kms:CreateGrant"
  | "kms:PutKeyPolicy"
  | "secretsmanager:GetSecretValue";

const PASSES = "hands a role to an AWS service, which then acts with that role's permissions";
const TAKES = "takes any role whose trust policy admits the caller";
const REWRITES = "rewrites a policy, so the caller can grant itself anything";
const CREDENTIALS = "makes credentials for another user";
const KEY = "uses any KMS key whose key policy trusts the account";

/** Each sensitive action and what it lets the caller do on every resource. */
export const SENSITIVE_ACTIONS: { readonly [A in SensitiveAction]: string } = {
  "iam:PassRole": PASSES,
  "sts:AssumeRole": TAKES,
  "sts:AssumeRoleWithWebIdentity": TAKES,
  "sts:AssumeRoleWithSAML": TAKES,
  "sts:AssumeRoot": "takes root access to member accounts",
  "sts:TagSession": "sets the session tags that attribute-based policies trust",
  "iam:CreatePolicyVersion": REWRITES,
  "iam:SetDefaultPolicyVersion": REWRITES,
  "iam:AttachRolePolicy": "attaches any managed policy (AdministratorAccess too) to a role",
  "iam:AttachUserPolicy": "attaches any managed policy (AdministratorAccess too) to a user",
  "iam:AttachGroupPolicy": "attaches any managed policy (AdministratorAccess too) to a group",
  "iam:PutRolePolicy": REWRITES,
  "iam:PutUserPolicy": REWRITES,
  "iam:PutGroupPolicy": REWRITES,
  "iam:UpdateAssumeRolePolicy": "rewrites who may take a role",
  "iam:CreateAccessKey": CREDENTIALS,
  "iam:CreateLoginProfile": CREDENTIALS,
  "iam:UpdateLoginProfile": CREDENTIALS,
  "iam:AddUserToGroup": "joins any group, and gets its policies",
  "kms:Decrypt": KEY,
  "kms:ReEncryptFrom": KEY,
  "kms:GenerateDataKey": KEY,
  "kms:CreateGrant": "grants itself (or anyone) the use of a key",
  "kms:PutKeyPolicy": "rewrites a key's policy",
  "secretsmanager:GetSecretValue": "reads every secret it can decrypt",
};

const SENSITIVE = Object.keys(SENSITIVE_ACTIONS) as SensitiveAction[];

/** An IAM action pattern as a regular expression: `*` any run of characters, `?` one; case-insensitive. */
const actionPattern = (action: string) =>
  new RegExp(
    `^${action
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
    "i",
  );

/** The sensitive actions an action (or action pattern) grants. */
export function sensitiveActions(action: string): SensitiveAction[] {
  const pattern = actionPattern(action);
  return SENSITIVE.filter((a) => pattern.test(a));
}

const WILD = /[*?]/;

/**
 * Why a Resource entry covers every resource of a kind, or undefined when it names some: `*`; an ARN whose account is a
 * wildcard (every account); or whose resource part is a wildcard right after its type (`role/*`, `key/*`, `*`).
 * A path or name prefix (`role/ray-gpu-*`, `role/service-role/*`) narrows it.
 */
export function wildcardResource(resource: string): string | undefined {
  if (/^[*?]+$/.test(resource)) return "every resource";
  const parts = resource.split(":");
  if (parts[0] !== "arn" || parts.length < 6) return undefined;
  if (WILD.test(parts[4] ?? "")) return "any account";
  const rest = parts.slice(5).join(":");
  const type = /^([A-Za-z-]+)[/:]/.exec(rest)?.[1];
  return /^(?:[A-Za-z-]+[/:])?[*?]/.test(rest) ? `every ${type ?? "resource"} of the account` : undefined;
}

/** The widest resource a statement applies to, with why, or undefined when every entry names some resources. */
export function statementScope(s: Obj): { resource: string; why: string } | undefined {
  if (s["NotResource"] !== undefined) return { resource: "NotResource", why: "every resource but those listed" };
  for (const r of list(s["Resource"])) {
    const why = wildcardResource(String(r));
    if (why) return { resource: String(r), why };
  }
  return undefined;
}
