/** `pulumi-ray-gpu/policy`: the policy pack's rules (pure) and the pack itself (needs `@pulumi/policy`). */
export * from "./rules";
export { createPolicyPack, deploySimulationPolicy, resourcePolicies, stackPolicy } from "./pack";
