/** `pulumi-ray-gpu/policy`: the policy pack's rules (pure) and the pack itself (needs `@pulumi/policy`). */
export * from "./rules";
export {
  bucketEncryptionPolicy,
  createPolicyPack,
  deploySimulationPolicy,
  resourcePolicies,
  stackPolicy,
} from "./pack";
