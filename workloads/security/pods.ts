/**
 * What every rendered Ray pod runs with: Ray's token authentication, a non-root user with no privilege escalation
 * and no capabilities, the runtime's default seccomp profile, and no Kubernetes API token. Together they meet the
 * Pod Security Standard `restricted` (see docs/security.md).
 */
import { SUBMITTER_REQUEST } from "../../core/platform/queueing";
import type { Container, PodSecurityContext, PodTemplateSpec, SecurityContext } from "../k8s/types";

/** User and group of the `ray` user in Ray's official images (`rayproject/ray`). */
export const RAY_UID = 1000;
export const RAY_GID = 100;

/**
 * Ray's token authentication, one token per job: with `authOptions.mode: token` and no `secretName`, KubeRay 1.7
 * creates a Secret named after each RayCluster, holding a random 32-byte token under `auth_token` and owned by the
 * RayCluster (deleted with it), and hands it to every Ray container and to the job submitter
 * (ray-operator/controllers/ray/raycluster_controller.go `reconcileAuthSecret`, rayjob_controller.go
 * `configureSubmitterContainer`). No job can reach another job's cluster with its own token.
 */
export const RAY_AUTH: { readonly mode: "token" } = { mode: "token" };

/** Pod settings: Ray's user, files owned by its group, the runtime's default seccomp profile. */
export const POD_SECURITY: PodSecurityContext = {
  runAsNonRoot: true,
  runAsUser: RAY_UID,
  runAsGroup: RAY_GID,
  fsGroup: RAY_GID,
  seccompProfile: { type: "RuntimeDefault" },
};

/** Container settings: no privilege escalation (Ray's images give `ray` passwordless sudo), no capabilities. */
export const CONTAINER_SECURITY: SecurityContext = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  runAsNonRoot: true,
  seccompProfile: { type: "RuntimeDefault" },
};

/** Pod-spec fields every Ray pod and the submitter get: no API token (no pod here calls the Kubernetes API). */
export const POD_HARDENING = { automountServiceAccountToken: false, securityContext: POD_SECURITY } as const;

/** Label of the job submitter's pods, so the namespace's NetworkPolicy can let them reach the head. */
export const SUBMITTER_LABEL = { "ray-gpu.io/role": "submitter" } as const;

/**
 * The K8sJobMode submitter's pod: KubeRay's default one runs as root with no security context, and may land on any
 * node. KubeRay fills in the `ray job submit` command and the token variables; this sets who runs it, with what, and
 * where: beside the head (`nodeSelector`), so a queue's flavors can only assign it the CPU pool.
 */
export function submitterTemplate(
  image: string,
  labels: Readonly<Record<string, string>>,
  nodeSelector: Readonly<Record<string, string>>,
): PodTemplateSpec {
  const { cpuMillis, memoryMiB } = SUBMITTER_REQUEST;
  const container: Container = {
    name: "ray-job-submitter",
    image,
    resources: { requests: { cpu: `${cpuMillis}m`, memory: `${memoryMiB}Mi` }, limits: { cpu: "1", memory: "1Gi" } },
    securityContext: CONTAINER_SECURITY,
  };
  return {
    metadata: { labels: { ...labels, ...SUBMITTER_LABEL } },
    spec: { containers: [container], restartPolicy: "Never", nodeSelector: { ...nodeSelector }, ...POD_HARDENING },
  };
}
