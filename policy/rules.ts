/**
 * The rules of the `pulumi-ray-gpu` policy pack, as pure functions of a resource (its Pulumi type, inputs and
 * options) or of the whole stack: they check any stack that uses our components, or its own KubeRay resources.
 * `./pack.ts` wraps them for `@pulumi/policy`; tests call them directly with passing and failing resources.
 *
 * Each violation names the resource, the field path and the fix (`./inputs.ts`, `violation`). The rules by subject:
 * Ray (`./ray-rules.ts`), Ray pods' security (`./pod-security.ts`), IAM (`./iam-rules.ts`), other AWS resources
 * (`./aws-rules.ts`); and, over the whole stack, the NetworkPolicies (`./network-policy.ts`) and every bucket's
 * default encryption (`./bucket-encryption.ts`).
 */
import { AWS_RULES } from "./aws-rules";
import { BUCKET_ENCRYPTION_RULE_NAME, bucketEncryptionViolations } from "./bucket-encryption";
import { IAM_RULES } from "./iam-rules";
import type { ResourceRule } from "./inputs";
import { networkPolicyViolations } from "./network-policy";
import { POD_SECURITY_RULES } from "./pod-security";
import { isRayType } from "./ray-pods";
import { RAY_RULES } from "./ray-rules";
import type { StackPolicyInput } from "./bucket-encryption";

export type { PolicyInput, ResourceRule } from "./inputs";
export { networkPolicyViolations, notDefaultDeny } from "./network-policy";
export { BUCKET_ENCRYPTION_RULE_NAME, bucketEncryptionViolations, type StackPolicyInput } from "./bucket-encryption";
export { DEPLOY_RULE_NAME, deployNode, deploySimulationViolations, type StackResourceInput } from "./deploy-simulation";
export { isRayType, RAY_TYPES, type RayKind } from "./ray-pods";
export { imageProblem } from "./ray-rules";
export { adminPolicy, ADMIN_POLICIES, policyStatements, wildcardAction } from "./iam-rules";
export { sensitiveActions, SENSITIVE_ACTIONS, wildcardResource } from "./iam-escalation";
export { repeatedKeys } from "./strict-json";
export { PSS_CONTROLS } from "./pss-controls";
export { awsManagedKey } from "./aws-rules";
export { openToInternet } from "./endpoint";

/** Every resource rule of the pack, all mandatory. */
export const RULES: readonly ResourceRule[] = [...RAY_RULES, ...POD_SECURITY_RULES, ...IAM_RULES, ...AWS_RULES];

/** The name of the stack rule (`networkPolicyViolations`). */
export const STACK_RULE_NAME = "network-policy-present";

/** Whether a rule checks a resource type: one it lists, or any `ray.io` version of a KubeRay kind it checks. */
export const appliesTo = (rule: ResourceRule, type: string) =>
  rule.types.includes(type) || (isRayType(type) && rule.types.some(isRayType));

/** Every violation of every rule in a set of resources (what the pack reports), one line each. */
export function allViolations(resources: readonly StackPolicyInput[]): string[] {
  return [
    ...resources.flatMap((r) =>
      RULES.filter((rule) => appliesTo(rule, r.type)).flatMap((rule) => rule.check(r).map((v) => `${rule.name}: ${v}`)),
    ),
    ...networkPolicyViolations(resources).map((v) => `${STACK_RULE_NAME}: ${v}`),
    ...bucketEncryptionViolations(resources).map((v) => `${BUCKET_ENCRYPTION_RULE_NAME}: ${v}`),
  ];
}
