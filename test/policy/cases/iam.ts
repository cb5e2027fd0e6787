/** Good and bad IAM inputs: every way a policy document is written, and admin-level managed policies. */
import type { PolicyInput } from "../../../policy/rules";
import type { BadCase, GoodCase } from "./fixtures";

const ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";
const doc = (Statement: unknown) => JSON.stringify({ Version: "2012-10-17", Statement });
const allow = (Action: unknown, Resource: unknown = "*") => ({ Effect: "Allow", Action, Resource });
const BUCKET = "arn:aws:s3:::acme-ml-prod";
const rolePolicy = (policy: unknown): PolicyInput => ({ type: ROLE_POLICY, name: "p", props: { policy } });
const WILD = "no-wildcard-iam";
const ADMIN = "no-admin-managed-policy";
const ESCALATION = "no-unscoped-escalation-iam";
const ROLE = "arn:aws:iam::123456789012:role/ray-gpu-node";
const KEY = "arn:aws:kms:us-east-1:123456789012:key/0f2c1e4a-1111-2222-3333-444455556666";

/** An escalation case on a RolePolicy: one statement's Action (path `policy.Statement[0].Action`). */
const escalation = (variant: string, statement: unknown, path = "policy.Statement[0].Action"): BadCase => ({
  variant,
  rule: ESCALATION,
  input: rolePolicy(doc([statement])),
  path,
});

/** A wildcard case on a RolePolicy. */
const wild = (variant: string, policy: unknown, path: string): BadCase => ({
  variant,
  rule: WILD,
  input: rolePolicy(policy),
  path,
});

const attached = (variant: string, type: string, props: Record<string, unknown>, path: string): BadCase => ({
  variant,
  rule: ADMIN,
  input: { type, name: "a", props },
  path,
});

export const IAM_BAD_CASES: readonly BadCase[] = [
  wild("s3:Get* on Resource *", doc([allow("s3:Get*")]), "policy.Statement[0].Action"),
  wild("* on a bucket", doc([allow("*", BUCKET)]), "policy.Statement[0].Action"),
  wild("s3:* on a bucket", doc([allow(["s3:GetObject", "s3:*"], BUCKET)]), "policy.Statement[0].Action[1]"),
  wild("iam:* on a role", doc([allow("iam:*", "arn:aws:iam::123456789012:role/x")]), "policy.Statement[0].Action"),
  wild("a wildcard service", doc([allow("*:GetObject", BUCKET)]), "policy.Statement[0].Action"),
  wild(
    "wildcard in a Resource list holding *",
    doc([allow("ec2:Describe*", [BUCKET, "*"])]),
    "policy.Statement[0].Action",
  ),
  wild("? wildcard on *", doc([allow("s3:GetObjec?")]), "policy.Statement[0].Action"),
  wild(
    "NotAction with Allow",
    doc([{ Effect: "Allow", NotAction: "iam:*", Resource: "*" }]),
    "policy.Statement[0].NotAction",
  ),
  wild("single-object Statement", doc(allow("s3:*", BUCKET)), "policy.Statement.Action"),
  wild("document as an object", { Statement: [allow("*")] }, "policy.Statement[0].Action"),
  wild(
    "wildcard with NotResource",
    doc([{ Effect: "Allow", Action: "s3:Get*", NotResource: BUCKET }]),
    "policy.Statement[0].Action",
  ),
  wild("second statement", doc([allow("s3:GetObject", BUCKET), allow("kms:*", BUCKET)]), "policy.Statement[1].Action"),
  wild("not valid JSON", '{"Statement": [', "policy"),
  wild(
    "Statement given twice",
    `{"Version":"2012-10-17","Statement":[${JSON.stringify(allow("*"))}],"Statement":[${JSON.stringify(allow("s3:GetObject", BUCKET))}]}`,
    "policy.Statement",
  ),
  wild(
    "Effect given twice in a statement",
    '{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Effect":"Deny"}]}',
    "policy.Statement[0].Effect",
  ),
  wild(
    "Action given twice, the second escaped",
    `{"Statement":[{"Effect":"Allow","Action":"*","Resource":"${BUCKET}","Act\\u0069on":"s3:GetObject"}]}`,
    "policy.Statement[0].Action",
  ),
  wild(
    "a key given twice in other cases",
    `{"Statement":[{"Effect":"Deny","Action":"s3:*","Resource":"*","effect":"Allow"}]}`,
    "policy.Statement[0].effect",
  ),
  escalation("iam:PassRole on Resource *", allow("iam:PassRole")),
  escalation("sts:AssumeRole on every account's role", allow("sts:AssumeRole", "arn:aws:iam::*:role/admin")),
  escalation(
    "sts:AssumeRoleWithWebIdentity on every role",
    allow(["s3:GetObject", "sts:AssumeRoleWithWebIdentity"], "arn:aws:iam::123456789012:role/*"),
    "policy.Statement[0].Action[1]",
  ),
  escalation("kms:Decrypt on every key", allow("kms:Decrypt", "arn:aws:kms:us-east-1:123456789012:key/*")),
  escalation("iam:CreatePolicyVersion on *", allow("iam:CreatePolicyVersion")),
  escalation("iam:AttachRolePolicy on *", allow("iam:AttachRolePolicy")),
  escalation("PassRole spelled in lower case", allow("IAM:passrole")),
  escalation("iam:Pass* on every role", allow("iam:Pass*", "arn:aws:iam::123456789012:role/*")),
  escalation("kms:Decrypt with NotResource", { Effect: "Allow", Action: "kms:Decrypt", NotResource: KEY }),
  escalation("secretsmanager:GetSecretValue on *", allow("secretsmanager:GetSecretValue")),
  {
    variant: "inline role policy (Role inlinePolicies)",
    rule: WILD,
    input: {
      type: "aws:iam/role:Role",
      name: "r",
      props: {
        inlinePolicies: [
          { name: "ok", policy: doc([allow("s3:GetObject", BUCKET)]) },
          { name: "all", policy: doc([allow("*")]) },
        ],
      },
    },
    path: "inlinePolicies[1].policy.Statement[0].Action",
  },
  ...["aws:iam/policy:Policy", "aws:iam/userPolicy:UserPolicy", "aws:iam/groupPolicy:GroupPolicy"].map((type) => ({
    variant: `${type.split(":").at(-1)} with *`,
    rule: WILD,
    input: { type, name: "p", props: { policy: doc([allow("*")]) } },
    path: "policy.Statement[0].Action",
  })),
  attached(
    "AdministratorAccess attachment",
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
    { role: "r", policyArn: "arn:aws:iam::aws:policy/AdministratorAccess" },
    "policyArn",
  ),
  attached(
    "PowerUserAccess by PolicyAttachment",
    "aws:iam/policyAttachment:PolicyAttachment",
    { roles: ["r"], policyArn: "arn:aws:iam::aws:policy/PowerUserAccess" },
    "policyArn",
  ),
  attached(
    "IAMFullAccess in a Role's managedPolicyArns",
    "aws:iam/role:Role",
    { managedPolicyArns: ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess", "arn:aws:iam::aws:policy/IAMFullAccess"] },
    "managedPolicyArns[1]",
  ),
  attached(
    "AdministratorAccess in GovCloud, to a user",
    "aws:iam/userPolicyAttachment:UserPolicyAttachment",
    { user: "u", policyArn: "arn:aws-us-gov:iam::aws:policy/AdministratorAccess" },
    "policyArn",
  ),
  attached(
    "AdministratorAccess by RolePolicyAttachmentsExclusive",
    "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive",
    { roleName: "r", policyArns: ["arn:aws:iam::aws:policy/AdministratorAccess"] },
    "policyArns[0]",
  ),
];

export const IAM_GOOD_CASES: readonly GoodCase[] = [
  {
    name: "escalating actions on named roles and keys, on a name prefix, or only denied",
    rules: [WILD, ESCALATION],
    input: rolePolicy(
      doc([
        allow("iam:PassRole", ROLE),
        allow(["kms:Decrypt", "kms:GenerateDataKey"], KEY),
        allow("sts:AssumeRole", "arn:aws:iam::123456789012:role/ray-gpu-*"),
        { Effect: "Deny", Action: "iam:PassRole", Resource: "*" },
      ]),
    ),
  },
  {
    name: "named actions; a wildcard only in a Deny, or on a bucket's objects",
    rules: [WILD],
    input: rolePolicy(
      doc([
        allow(["s3:GetObject", "s3:PutObject"], `${BUCKET}/*`),
        allow("s3:Get*", BUCKET),
        { Effect: "Deny", Action: "s3:*", Resource: "*" },
        { Effect: "Deny", NotAction: "s3:GetObject", Resource: "*" },
      ]),
    ),
  },
  {
    name: "a Role with narrow inline policies and ordinary managed policies",
    rules: [WILD, ADMIN],
    input: {
      type: "aws:iam/role:Role",
      name: "r",
      props: {
        inlinePolicies: [{ name: "ok", policy: doc(allow("s3:ListBucket", BUCKET)) }],
        managedPolicyArns: ["arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"],
      },
    },
  },
  {
    name: "a customer policy named AdministratorAccess is not AWS's",
    rules: [ADMIN],
    input: {
      type: "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
      name: "a",
      props: { policyArn: "arn:aws:iam::123456789012:policy/AdministratorAccess" },
    },
  },
];
