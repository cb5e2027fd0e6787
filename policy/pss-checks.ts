/**
 * How the Pod Security Standards' controls (`./pss-controls.ts`) read a Ray pod: findings at the pod's or each
 * container's fields, and the allowed values the profiles list. Pure.
 */
import { obj, type Obj } from "./inputs";
import { podContainers, type ContainerAt, type PodAt } from "./ray-pods";

/** One problem of a pod: the field path from the resource's root, and what is wrong. */
export interface Finding {
  readonly path: string;
  readonly problem: string;
}

export const sc = (v: Obj) => obj(v["securityContext"]);
export const CONTAINERS = "containers[*], initContainers[*], ephemeralContainers[*]";

/** Findings of each container of a pod: `check` gives (field below the container, problem) pairs. */
export const eachContainer =
  (check: (c: Obj, pod: Obj) => (readonly [field: string, problem: string])[]) =>
  (pod: PodAt): Finding[] =>
    podContainers(pod).flatMap((c: ContainerAt) =>
      check(c.value, pod.value).map(([field, problem]) => ({
        path: `${c.path}.${field}`,
        problem: `(${pod.role}, container ${c.name}) ${problem}`,
      })),
    );

/** A finding at a field of the pod spec. */
export const atPod = (pod: PodAt, field: string, problem: string): Finding => ({
  path: `${pod.path}.${field}`,
  problem: `(${pod.role} pod) ${problem}`,
});

/** A value is allowed when absent or one of `allowed`. */
export const allowedOrUnset = (v: unknown, allowed: readonly unknown[]) => v === undefined || allowed.includes(v);

export const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
export const HOOKS = ["postStart", "preStop"] as const;
export const SELINUX_TYPES = ["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"];
export const SECCOMP = ["RuntimeDefault", "Localhost"];
export const APPARMOR = ["RuntimeDefault", "Localhost"];
export const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";

/** The sysctls the kubelet and the Baseline profile count as safe (namespaced, isolated from other pods). */
export const SAFE_SYSCTLS: readonly string[] = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
];

/** The volume sources the Restricted profile allows (`hostPath` is its own control). */
export const ALLOWED_VOLUMES: readonly string[] = [
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
];

/** SELinux options outside what the Baseline profile allows, as (field, problem) pairs. */
export function seLinuxProblems(context: Obj): (readonly [string, string])[] {
  const o = obj(context["seLinuxOptions"]);
  return [
    ...(allowedOrUnset(o["type"], SELINUX_TYPES)
      ? []
      : [["securityContext.seLinuxOptions.type", `is ${JSON.stringify(o["type"])}, not a container type`] as const]),
    ...(["user", "role"] as const)
      .filter((k) => !allowedOrUnset(o[k], [""]))
      .map((k) => [`securityContext.seLinuxOptions.${k}`, `sets the SELinux ${k} ${JSON.stringify(o[k])}`] as const),
  ];
}

/** The `host` of a probe's or hook's handler, as (field, problem) pairs. */
export const handlerHost = (field: string, handler: Obj) =>
  (["httpGet", "tcpSocket"] as const)
    .filter((h) => !allowedOrUnset(obj(handler[h])["host"], [""]))
    .map((h) => [`${field}.${h}.host`, `sends to ${JSON.stringify(obj(handler[h])["host"])}, not the pod`] as const);
