/**
 * The Pod Security Standard `restricted` (Kubernetes' pod-security-admission policies, v1.36), checked on a pod spec
 * as the admission controller does: the rules a rendered Ray pod could break. Returns one line per violation.
 */
import type { Container, PodSpec } from "../../workloads/k8s/types";

const ALLOWED_VOLUME_KEYS = new Set([
  "name",
  "emptyDir",
  "configMap",
  "secret",
  "projected",
  "persistentVolumeClaim",
  "csi",
  "downwardAPI",
  "ephemeral",
]);

function containerViolations(c: Container, pod: PodSpec): string[] {
  const sc = c.securityContext;
  const out: string[] = [];
  if (sc?.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation != false`);
  if (!sc?.capabilities?.drop?.includes("ALL")) out.push(`${c.name}: capabilities.drop lacks ALL`);
  if (!(sc?.runAsNonRoot ?? pod.securityContext?.runAsNonRoot)) out.push(`${c.name}: runAsNonRoot not true`);
  const seccomp = sc?.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type;
  if (seccomp !== "RuntimeDefault" && seccomp !== "Localhost") out.push(`${c.name}: seccompProfile not RuntimeDefault`);
  const raw = c as unknown as { securityContext?: { privileged?: boolean; runAsUser?: number } };
  if (raw.securityContext?.privileged) out.push(`${c.name}: privileged`);
  if ((raw.securityContext?.runAsUser ?? pod.securityContext?.runAsUser) === 0) out.push(`${c.name}: runAsUser 0`);
  return out;
}

/** Violations of `restricted` in `pod` (empty when it complies). */
export function restrictedViolations(pod: PodSpec): string[] {
  const raw = pod as unknown as Record<string, unknown>;
  const out = ["hostNetwork", "hostPID", "hostIPC"].filter((k) => raw[k] === true).map((k) => `${k}: true`);
  for (const v of pod.volumes ?? [])
    for (const key of Object.keys(v))
      if (!ALLOWED_VOLUME_KEYS.has(key)) out.push(`volume ${v.name}: ${key} not allowed`);
  if (pod.securityContext?.runAsUser === 0) out.push("pod runAsUser 0");
  return [...out, ...pod.containers.flatMap((c) => containerViolations(c, pod))];
}
