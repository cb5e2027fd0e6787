/**
 * The rules of the `pulumi-ray-gpu` policy pack, as pure functions of a resource (its Pulumi type, inputs and
 * options) or of the whole stack: they check any stack that uses our components, or its own KubeRay resources.
 * `./pack.ts` wraps them for `@pulumi/policy`; tests call them directly with passing and failing resources.
 *
 * Each violation names the resource, the field path and the fix (`./inputs.ts`, `violation`). The rules by subject:
 * Ray (`./ray-rules.ts`), Ray pods' security (`./pod-security.ts`), IAM (`./iam-rules.ts`), other AWS resources
 * (`./aws-rules.ts`), and the stack's NetworkPolicies (`./network-policy.ts`).
 */
import { AWS_RULES } from "./aws-rules";
import { IAM_RULES } from "./iam-rules";
import type { PolicyInput, ResourceRule } from "./inputs";
import { networkPolicyViolations } from "./network-policy";
import { POD_SECURITY_RULES } from "./pod-security";
import { RAY_RULES } from "./ray-rules";

export type { PolicyInput, ResourceRule } from "./inputs";
export { networkPolicyViolations, notDefaultDeny } from "./network-policy";
export { DEPLOY_RULE_NAME, deployNode, deploySimulationViolations, type StackResourceInput } from "./deploy-simulation";
export { RAY_TYPES, type RayKind } from "./ray-pods";
export { imageProblem } from "./ray-rules";
export { adminPolicy, ADMIN_POLICIES, policyStatements, wildcardAction } from "./iam-rules";
export { awsManagedKey } from "./aws-rules";
export { openToInternet } from "./endpoint";

/** Every resource rule of the pack, all mandatory. */
export const RULES: readonly ResourceRule[] = [...RAY_RULES, ...POD_SECURITY_RULES, ...IAM_RULES, ...AWS_RULES];

/** The name of the stack rule (`networkPolicyViolations`). */
export const STACK_RULE_NAME = "network-policy-present";

/** Every violation of every rule in a set of resources (what the pack reports), one line each. */
export function allViolations(resources: readonly PolicyInput[]): string[] {
  return [
    ...resources.flatMap((r) =>
      RULES.filter((rule) => rule.types.includes(r.type)).flatMap((rule) =>
        rule.check(r).map((v) => `${rule.name}: ${v}`),
      ),
    ),
    ...networkPolicyViolations(resources).map((v) => `${STACK_RULE_NAME}: ${v}`),
  ];
}
