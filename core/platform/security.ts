/**
 * The cluster's hardening, planned: control-plane audit logging, envelope encryption of Kubernetes Secrets with the
 * stack's own KMS key, the upgrade policy, instance metadata closed to pods, and which data is protected from
 * `pulumi destroy`. Values are per environment (`ENVIRONMENT_PROFILES`); docs/security.md says why each is the default.
 */
import type { StackConfig } from "../config/stack";
import { ENVIRONMENT_PROFILES } from "../environments";

/** Control-plane logs sent to CloudWatch: API requests, the audit trail, and IAM authentication. */
export const CONTROL_PLANE_LOG_TYPES = ["api", "audit", "authenticator"] as const;

/**
 * IMDSv2 only, one network hop: processes on the node reach the instance metadata service, pods (one hop further,
 * behind the pod network) do not, so they cannot take the node's role. Pods get AWS access through EKS Pod Identity.
 */
export const IMDS = { httpTokens: "required", httpPutResponseHopLimit: 1, httpEndpoint: "enabled" } as const;

/** The stack's security settings, planned. */
export interface SecurityPlan {
  readonly controlPlaneLogTypes: readonly string[];
  /** Envelope-encrypt Kubernetes Secrets with the stack's KMS key (cannot be turned off once on). */
  readonly encryptSecrets: true;
  /** Upgrade at the end of standard support rather than pay for extended support. */
  readonly supportType: "STANDARD";
  /** Protect (and retain on delete) the bucket and the KMS key. */
  readonly protectData: boolean;
  readonly kmsDeletionWindowDays: number;
  /** CIDRs pods may reach on HTTPS. */
  readonly httpsEgressCidrs: readonly string[];
}

/** Plans the stack's security settings. */
export function planSecurity(config: StackConfig): SecurityPlan {
  const profile = ENVIRONMENT_PROFILES[config.environment].platform;
  return {
    controlPlaneLogTypes: CONTROL_PLANE_LOG_TYPES,
    encryptSecrets: true,
    supportType: "STANDARD",
    protectData: profile.protectData,
    kmsDeletionWindowDays: profile.kmsDeletionWindowDays,
    httpsEgressCidrs: config.platform.security.httpsEgressCidrs,
  };
}
