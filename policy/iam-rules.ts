/**
 * IAM rules: no policy document grants a wildcard action (however the document is written: a JSON string or an
 * object, `Statement` one object or an array, `Action` a string or an array, or `NotAction`) or is JSON text with a
 * key written twice; no statement grants an action that escalates privilege or opens keys (`./iam-escalation.ts`) on
 * every resource; and no identity gets an AWS managed policy that grants administrator-level access. Pure.
 */
import { sensitiveActions, SENSITIVE_ACTIONS, statementScope } from "./iam-escalation";
import { arr, indexPath, list, obj, violation, type Obj, type PolicyInput, type ResourceRule } from "./inputs";
import { repeatedKeys } from "./strict-json";

/** A statement of a policy document and its field path. */
type StatementAt = { readonly path: string; readonly s: Obj };

/**
 * A policy document's statements with their paths (as `JSON.parse` reads JSON text) and each key written twice in the
 * text (`JSON.parse` keeps the last one; AWS may read another), or why the document cannot be read at all.
 */
type Parsed =
  | { readonly statements: readonly StatementAt[]; readonly repeated: readonly { path: string; problem: string }[] }
  | { readonly error: string };

/** The statements of a policy document given as JSON text or as an object. */
export function policyStatements(policy: unknown, path: string): Parsed {
  let doc: unknown = policy;
  if (typeof policy === "string") {
    try {
      doc = JSON.parse(policy);
    } catch {
      return { error: "is not valid JSON" };
    }
  }
  const repeated = typeof policy === "string" ? repeatedKeys(policy) : [];
  const statement = obj(doc)["Statement"];
  return {
    statements: list(statement).map((s, i) => ({ path: `${path}.Statement${indexPath(statement, i)}`, s: obj(s) })),
    repeated: repeated.map((k) => ({
      path: `${path}${k.path}`,
      problem:
        `repeats the key ${JSON.stringify(k.first)}${k.first === k.again ? "" : ` as ${JSON.stringify(k.again)}`} ` +
        "in one object: JSON.parse keeps the last, AWS may read another, so reviewers and AWS see different policies",
    })),
  };
}

/** Why an action pattern grants too much, or undefined; `everywhere` when the statement applies to every resource. */
export function wildcardAction(action: string, everywhere: boolean): string | undefined {
  if (!/[*?]/.test(action)) return undefined;
  if (/^\*+$/.test(action)) return "grants every action of every service";
  const [service = "", name = ""] = action.split(":");
  if (/[*?]/.test(service)) return "matches actions of more than one service";
  if (/^\*+$/.test(name)) return `grants every action of ${service}`;
  return everywhere ? 'is a wildcard on Resource "*": it grants every matching action, present and future' : undefined;
}

const WILDCARD_FIX = "list the actions the role needs (and narrow Resource to ARNs)";

/** Whether a statement applies to every resource: `Resource` holds `*`, or it has `NotResource`. */
const everywhere = (s: Obj) => s["NotResource"] !== undefined || list(s["Resource"]).includes("*");

/** The wildcard grants of one Allow statement. */
function statementProblems(r: PolicyInput, at: { path: string; s: Obj }): string[] {
  const { path, s } = at;
  if (s["Effect"] !== "Allow") return [];
  if (s["NotAction"] !== undefined)
    return [violation(r, `${path}.NotAction`, "with Allow grants every action it does not list", WILDCARD_FIX)];
  return list(s["Action"]).flatMap((a, i) => {
    const why = wildcardAction(String(a), everywhere(s));
    return why
      ? [violation(r, `${path}.Action${indexPath(s["Action"], i)}`, `${JSON.stringify(a)} ${why}`, WILDCARD_FIX)]
      : [];
  });
}

/** The policy documents of a resource with their field paths: `policy`, or a Role's `inlinePolicies[i].policy`. */
function documents(r: PolicyInput): { path: string; policy: unknown }[] {
  if (r.type === "aws:iam/role:Role")
    return arr(r.props["inlinePolicies"]).map((p, i) => ({
      path: `inlinePolicies[${i}].policy`,
      policy: obj(p)["policy"],
    }));
  return [{ path: "policy", policy: r.props["policy"] }];
}

function wildcardProblems(r: PolicyInput): string[] {
  return documents(r).flatMap(({ path, policy }) => {
    if (policy === undefined) return [];
    const parsed = policyStatements(policy, path);
    if ("error" in parsed) return [violation(r, path, parsed.error, "give a valid IAM policy document")];
    return [
      ...parsed.repeated.map((k) => violation(r, k.path, k.problem, "write each key once")),
      ...parsed.statements.flatMap((at) => statementProblems(r, at)),
    ];
  });
}

/** The readable statements of every policy document of a resource (`no-wildcard-iam` reports unreadable ones). */
const statementsOf = (r: PolicyInput): StatementAt[] =>
  documents(r).flatMap(({ path, policy }) => {
    const parsed = policy === undefined ? undefined : policyStatements(policy, path);
    return parsed && "statements" in parsed ? parsed.statements : [];
  });

/**
 * Allow statements that grant an action escalating privilege or opening keys on every resource (or every role, key or
 * account). A whole service or a wildcard on `Resource: "*"` is `no-wildcard-iam`'s; a Condition does not excuse it.
 */
function escalationProblems(r: PolicyInput): string[] {
  return statementsOf(r).flatMap(({ path, s }) => {
    const scope = s["Effect"] === "Allow" ? statementScope(s) : undefined;
    if (!scope) return [];
    return list(s["Action"]).flatMap((a, i) => {
      const action = String(a);
      const granted = sensitiveActions(action);
      if (!granted.length || wildcardAction(action, everywhere(s))) return [];
      const shownScope = scope.resource === "NotResource" ? "with NotResource" : `on ${JSON.stringify(scope.resource)}`;
      return [
        violation(
          r,
          `${path}.Action${indexPath(s["Action"], i)}`,
          `${JSON.stringify(action)} ${shownScope} (${scope.why}) grants ${granted.join(", ")}: ` +
            SENSITIVE_ACTIONS[granted[0]!],
          "name the roles, keys or secrets it needs in Resource (their ARNs, in this account)",
        ),
      ];
    });
  });
}

/** AWS managed policies that grant administrator-level access (all actions, all but IAM, or all of IAM). */
export const ADMIN_POLICIES = ["AdministratorAccess", "PowerUserAccess", "IAMFullAccess"] as const;

/** The admin-level AWS managed policy an ARN names (any partition, any path), or undefined. */
export const adminPolicy = (arn: unknown) =>
  ADMIN_POLICIES.find((p) => new RegExp(`^arn:aws[a-z-]*:iam::aws:policy/(?:[\\w+=,.@-]+/)*${p}$`).test(String(arn)));

/** Where each attachment type names its managed policies. */
const ATTACHMENT_FIELDS: Readonly<Record<string, string>> = {
  "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "policyArn",
  "aws:iam/policyAttachment:PolicyAttachment": "policyArn",
  "aws:iam/userPolicyAttachment:UserPolicyAttachment": "policyArn",
  "aws:iam/groupPolicyAttachment:GroupPolicyAttachment": "policyArn",
  "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive": "policyArns",
  "aws:iam/role:Role": "managedPolicyArns",
};

function adminProblems(r: PolicyInput): string[] {
  const field = ATTACHMENT_FIELDS[r.type] ?? "policyArn";
  const value = r.props[field];
  return list(value).flatMap((arn, i) => {
    const admin = adminPolicy(arn);
    return admin
      ? [
          violation(
            r,
            `${field}${indexPath(value, i)}`,
            `attaches ${admin} (${String(arn)}), administrator-level access`,
            "attach a policy that lists the actions it needs",
          ),
        ]
      : [];
  });
}

/** Resource types that carry an IAM policy document. */
const DOCUMENT_TYPES = [
  "aws:iam/policy:Policy",
  "aws:iam/rolePolicy:RolePolicy",
  "aws:iam/userPolicy:UserPolicy",
  "aws:iam/groupPolicy:GroupPolicy",
  "aws:iam/role:Role",
];

/** The IAM rules: policy documents and managed-policy attachments. */
export const IAM_RULES: readonly ResourceRule[] = [
  {
    name: "no-wildcard-iam",
    description:
      "IAM policies (managed, inline, a Role's inlinePolicies) allow no `*`, no `service:*`, no wildcard action on " +
      'Resource "*" and no NotAction, and repeat no key in their JSON text.',
    types: DOCUMENT_TYPES,
    check: wildcardProblems,
  },
  {
    name: "no-unscoped-escalation-iam",
    description:
      "No Allow statement grants an action that escalates privilege or opens keys and secrets (iam:PassRole, " +
      "sts:AssumeRole*, iam:CreatePolicyVersion, iam:Attach*Policy, kms:Decrypt, …) on every resource, any account, " +
      "or every role, key or secret of the account.",
    types: DOCUMENT_TYPES,
    check: escalationProblems,
  },
  {
    name: "no-admin-managed-policy",
    description: `No role, user or group gets an admin-level AWS managed policy (${ADMIN_POLICIES.join(", ")}).`,
    types: Object.keys(ATTACHMENT_FIELDS),
    check: adminProblems,
  },
];
