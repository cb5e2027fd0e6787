/**
 * The `pulumi-ray-gpu` policy pack for `pulumi preview --policy-pack` (see docs/security.md): the rules of
 * `./rules.ts`, mandatory. Needs `@pulumi/policy` (an optional peer dependency) in the pack's folder.
 */
import { PolicyPack, type ResourceValidationPolicy, type StackValidationPolicy } from "@pulumi/policy";
import {
  appliesTo,
  BUCKET_ENCRYPTION_RULE_NAME,
  bucketEncryptionViolations,
  DEPLOY_RULE_NAME,
  deploySimulationViolations,
  networkPolicyViolations,
  RULES,
  STACK_RULE_NAME,
} from "./rules";

/** Each rule as a resource policy of `@pulumi/policy`. */
export function resourcePolicies(): ResourceValidationPolicy[] {
  return RULES.map((rule) => ({
    name: rule.name,
    description: rule.description,
    enforcementLevel: "mandatory",
    validateResource: (args, report) => {
      if (!appliesTo(rule, args.type)) return;
      for (const v of rule.check({ type: args.type, name: args.name, props: args.props, protect: args.opts.protect }))
        report(v);
    },
  }));
}

/** The stack policy: a default-deny NetworkPolicy wherever Ray pods run (RayJob, RayCluster, RayService). */
export function stackPolicy(): StackValidationPolicy {
  return {
    name: STACK_RULE_NAME,
    description:
      "Every namespace that runs Ray pods has a default-deny NetworkPolicy: podSelector {}, Ingress and Egress, no rules.",
    enforcementLevel: "mandatory",
    validateStack: (args, report) => {
      const resources = args.resources.map((r) => ({
        type: r.type,
        name: r.name,
        props: r.props,
        protect: r.opts.protect,
      }));
      for (const v of networkPolicyViolations(resources)) report(v);
    },
  };
}

/**
 * The stack policy on buckets: every Bucket and BucketV2 has default encryption, inline or by an encryption
 * configuration whose `bucket` came from it (`propertyDependencies`, known in preview) or names it.
 */
export function bucketEncryptionPolicy(): StackValidationPolicy {
  return {
    name: BUCKET_ENCRYPTION_RULE_NAME,
    description:
      "Every S3 bucket has default encryption: inline, or a BucketServerSideEncryptionConfiguration(V2) whose bucket is it.",
    enforcementLevel: "mandatory",
    validateStack: (args, report) => {
      const resources = args.resources.map((r) => ({
        type: r.type,
        name: r.name,
        urn: r.urn,
        props: r.props,
        propertyDependencies: r.propertyDependencies,
      }));
      for (const v of bucketEncryptionViolations(resources)) report(v);
    },
  };
}

/**
 * The deploy simulation (`core/deploy/program.ts`) over the stack: `pulumi preview` refuses a stack whose `pulumi up`
 * would create a release before any node runs its pods, a custom resource before its CRD, a Ray pod no node group
 * takes, or a name over its service's limit.
 */
export function deploySimulationPolicy(): StackValidationPolicy {
  return {
    name: DEPLOY_RULE_NAME,
    description:
      "pulumi up can create every resource in the order it would: add-ons and releases after the nodes and CoreDNS " +
      "they need, custom resources after their CRD's chart, Ray pods on some node group, names within their limits.",
    enforcementLevel: "mandatory",
    validateStack: (args, report) => {
      for (const v of deploySimulationViolations(args.resources)) report(v);
    },
  };
}

/** Creates (and serves) the pack; call it from the pack folder's entry point only. */
export function createPolicyPack(): PolicyPack {
  return new PolicyPack("pulumi-ray-gpu", {
    policies: [...resourcePolicies(), stackPolicy(), bucketEncryptionPolicy(), deploySimulationPolicy()],
  });
}
