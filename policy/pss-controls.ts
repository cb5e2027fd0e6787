/**
 * The Pod Security Standards' Baseline and Restricted profiles, taken whole, as one table of controls: what each
 * restricts, what it allows, where it comes from, and how a Ray pod is checked against it. Source: Kubernetes, "Pod
 * Security Standards" (https://kubernetes.io/docs/concepts/security/pod-security-standards/, v1.34: Host Probes /
 * Lifecycle Hooks joined Baseline), and "Using sysctls in a Kubernetes Cluster" for the safe sysctls. Two controls are
 * the pack's own, stricter than the profile: no capability added at all, and no shared process namespace. Pure.
 */
import { arr, list, nonEmpty, obj } from "./inputs";
import {
  ALLOWED_VOLUMES,
  allowedOrUnset,
  APPARMOR,
  APPARMOR_ANNOTATION,
  atPod,
  CONTAINERS,
  eachContainer,
  handlerHost,
  HOOKS,
  PROBES,
  SAFE_SYSCTLS,
  sc,
  SECCOMP,
  seLinuxProblems,
  SELINUX_TYPES,
  type Finding,
} from "./pss-checks";
import type { PodAt } from "./ray-pods";

export type { Finding } from "./pss-checks";
export { ALLOWED_VOLUMES, SAFE_SYSCTLS } from "./pss-checks";

/** The rule that reports a control: the pod's own security, or its isolation from the node. */
export type PodRule = "ray-pod-security" | "ray-pod-host-isolation";

/** A control of the profile. */
export interface PssControl {
  /** Where it comes from: a profile of the Pod Security Standards, or the pack (stricter). */
  readonly source: "Baseline" | "Restricted" | "pack";
  readonly rule: PodRule;
  /** The fields it restricts, as the Pod Security Standards write them. */
  readonly fields: readonly string[];
  /** What it allows, in words. */
  readonly allowed: string;
  readonly fix: string;
  /** The problems of one pod (its containers included). */
  readonly check: (pod: PodAt) => Finding[];
}

/** The controls, by the name the Pod Security Standards give them. */
export type PssControlName =
  | "HostProcess"
  | "Host Namespaces"
  | "Privileged Containers"
  | "Capabilities"
  | "HostPath Volumes"
  | "Host Ports"
  | "Host Probes / Lifecycle Hooks"
  | "AppArmor"
  | "SELinux"
  | "/proc Mount Type"
  | "Seccomp"
  | "Sysctls"
  | "Volume Types"
  | "Privilege Escalation"
  | "Running as Non-root"
  | "Running as Non-root user"
  | "Added capabilities"
  | "Process namespace sharing";

const SECURITY: PodRule = "ray-pod-security";
const HOST: PodRule = "ray-pod-host-isolation";
const HOST_NAMESPACES = [
  ["hostNetwork", "network"],
  ["hostPID", "process"],
  ["hostIPC", "IPC"],
] as const;

/** Every control of the Baseline and Restricted profiles, and the pack's two stricter ones. */
export const PSS_CONTROLS: { readonly [N in PssControlName]: PssControl } = {
  HostProcess: {
    source: "Baseline",
    rule: SECURITY,
    fields: [
      "spec.securityContext.windowsOptions.hostProcess",
      `${CONTAINERS}.securityContext.windowsOptions.hostProcess`,
    ],
    allowed: "unset, false",
    fix: "remove hostProcess",
    check: (pod) => [
      ...(obj(sc(pod.value)["windowsOptions"])["hostProcess"] === true
        ? [atPod(pod, "securityContext.windowsOptions.hostProcess", "is true: a Windows host process")]
        : []),
      ...eachContainer((c) =>
        obj(sc(c)["windowsOptions"])["hostProcess"] === true
          ? [["securityContext.windowsOptions.hostProcess", "is true: a Windows host process"]]
          : [],
      )(pod),
    ],
  },
  "Host Namespaces": {
    source: "Baseline",
    rule: HOST,
    fields: ["spec.hostNetwork", "spec.hostPID", "spec.hostIPC"],
    allowed: "unset, false",
    fix: "remove it",
    check: (pod) =>
      HOST_NAMESPACES.filter(([field]) => pod.value[field] === true).map(([field, what]) =>
        atPod(pod, field, `is true: the pod shares the node's ${what} namespace`),
      ),
  },
  "Privileged Containers": {
    source: "Baseline",
    rule: SECURITY,
    fields: [`${CONTAINERS}.securityContext.privileged`],
    allowed: "unset, false",
    fix: "remove it",
    check: eachContainer((c) =>
      sc(c)["privileged"] === true
        ? [["securityContext.privileged", "is true: the container gets the node's devices"]]
        : [],
    ),
  },
  Capabilities: {
    source: "Restricted",
    rule: SECURITY,
    fields: [`${CONTAINERS}.securityContext.capabilities.drop`],
    allowed: "a list holding ALL",
    fix: "set drop: [ALL]",
    check: eachContainer((c) =>
      arr(obj(sc(c)["capabilities"])["drop"]).includes("ALL")
        ? []
        : [["securityContext.capabilities.drop", "does not hold ALL"]],
    ),
  },
  "Added capabilities": {
    source: "pack",
    rule: SECURITY,
    fields: [`${CONTAINERS}.securityContext.capabilities.add`],
    allowed: "unset, empty (Restricted allows NET_BIND_SERVICE; Ray binds no port below 1024)",
    fix: "remove add: Ray needs no capability",
    check: eachContainer((c) => {
      const add = obj(sc(c)["capabilities"])["add"];
      return nonEmpty(add) ? [["securityContext.capabilities.add", `adds ${list(add).map(String).join(", ")}`]] : [];
    }),
  },
  "HostPath Volumes": {
    source: "Baseline",
    rule: HOST,
    fields: ["spec.volumes[*].hostPath"],
    allowed: "unset",
    fix: "use an emptyDir, a PersistentVolumeClaim or a CSI volume",
    check: (pod) =>
      arr(pod.value["volumes"]).flatMap((v, i) =>
        obj(v)["hostPath"] === undefined
          ? []
          : [
              atPod(
                pod,
                `volumes[${i}].hostPath`,
                `mounts the node's ${String(obj(obj(v)["hostPath"])["path"])} into the pod`,
              ),
            ],
      ),
  },
  "Host Ports": {
    source: "Baseline",
    rule: HOST,
    fields: [`${CONTAINERS}.ports[*].hostPort`],
    allowed: "unset, 0",
    fix: "remove it",
    check: eachContainer((c) =>
      arr(c["ports"]).flatMap((p, i) =>
        allowedOrUnset(obj(p)["hostPort"], [0]) ? [] : [[`ports[${i}].hostPort`, "binds a port on the node"] as const],
      ),
    ),
  },
  "Host Probes / Lifecycle Hooks": {
    source: "Baseline",
    rule: HOST,
    fields: [
      `${CONTAINERS}.{livenessProbe,readinessProbe,startupProbe}.{httpGet,tcpSocket}.host`,
      `${CONTAINERS}.lifecycle.{postStart,preStop}.{httpGet,tcpSocket}.host`,
    ],
    allowed: 'unset, ""',
    fix: "remove host: probe and hook the pod itself",
    check: eachContainer((c) => [
      ...PROBES.flatMap((p) => handlerHost(p, obj(c[p]))),
      ...HOOKS.flatMap((h) => handlerHost(`lifecycle.${h}`, obj(obj(c["lifecycle"])[h]))),
    ]),
  },
  AppArmor: {
    source: "Baseline",
    rule: SECURITY,
    fields: [
      "spec.securityContext.appArmorProfile.type",
      `${CONTAINERS}.securityContext.appArmorProfile.type`,
      `metadata.annotations["${APPARMOR_ANNOTATION}*"]`,
    ],
    allowed: "unset, RuntimeDefault, Localhost; annotations runtime/default, localhost/*",
    fix: "use the RuntimeDefault (or a Localhost) AppArmor profile",
    check: (pod) => [
      ...(allowedOrUnset(obj(sc(pod.value)["appArmorProfile"])["type"], APPARMOR)
        ? []
        : [atPod(pod, "securityContext.appArmorProfile.type", "is not RuntimeDefault or Localhost")]),
      ...eachContainer((c) =>
        allowedOrUnset(obj(sc(c)["appArmorProfile"])["type"], APPARMOR)
          ? []
          : [["securityContext.appArmorProfile.type", "is not RuntimeDefault or Localhost"]],
      )(pod),
      ...Object.entries(obj(pod.meta.value["annotations"]))
        .filter(
          ([k, v]) => k.startsWith(APPARMOR_ANNOTATION) && v !== "runtime/default" && !/^localhost\//.test(String(v)),
        )
        .map(([k, v]) => ({
          path: `${pod.meta.path}.annotations[${JSON.stringify(k)}]`,
          problem: `(${pod.role} pod) is ${JSON.stringify(v)}, not runtime/default or localhost/*`,
        })),
    ],
  },
  SELinux: {
    source: "Baseline",
    rule: SECURITY,
    fields: [
      "spec.securityContext.seLinuxOptions.{type,user,role}",
      `${CONTAINERS}.securityContext.seLinuxOptions.{type,user,role}`,
    ],
    allowed: `type unset or ${SELINUX_TYPES.map((t) => JSON.stringify(t)).join(", ")}; user and role unset or ""`,
    fix: "remove seLinuxOptions (or keep type to a container type)",
    check: (pod) => [
      ...seLinuxProblems(sc(pod.value)).map(([field, problem]) => atPod(pod, field, problem)),
      ...eachContainer((c) => seLinuxProblems(sc(c)))(pod),
    ],
  },
  "/proc Mount Type": {
    source: "Baseline",
    rule: SECURITY,
    fields: [`${CONTAINERS}.securityContext.procMount`],
    allowed: "unset, Default",
    fix: "remove procMount",
    check: eachContainer((c) =>
      allowedOrUnset(sc(c)["procMount"], ["Default"])
        ? []
        : [["securityContext.procMount", `is ${JSON.stringify(sc(c)["procMount"])}: /proc is not masked`]],
    ),
  },
  Seccomp: {
    source: "Restricted",
    rule: SECURITY,
    fields: ["spec.securityContext.seccompProfile.type", `${CONTAINERS}.securityContext.seccompProfile.type`],
    allowed: "RuntimeDefault, Localhost (the container's, else the pod's); never Unconfined",
    fix: "set it to RuntimeDefault",
    check: (pod) => [
      ...(allowedOrUnset(obj(sc(pod.value)["seccompProfile"])["type"], SECCOMP)
        ? []
        : [atPod(pod, "securityContext.seccompProfile.type", "is not RuntimeDefault or Localhost")]),
      ...eachContainer((c, p) =>
        SECCOMP.includes(obj(sc(c)["seccompProfile"] ?? sc(p)["seccompProfile"])["type"] as string)
          ? []
          : [["securityContext.seccompProfile.type", "is not RuntimeDefault (nor the pod's)"]],
      )(pod),
    ],
  },
  Sysctls: {
    source: "Baseline",
    rule: SECURITY,
    fields: ["spec.securityContext.sysctls[*].name"],
    allowed: `unset, ${SAFE_SYSCTLS.join(", ")}`,
    fix: "set only safe sysctls",
    check: (pod) =>
      arr(sc(pod.value)["sysctls"]).flatMap((s, i) =>
        SAFE_SYSCTLS.includes(String(obj(s)["name"]))
          ? []
          : [
              atPod(
                pod,
                `securityContext.sysctls[${i}].name`,
                `${JSON.stringify(obj(s)["name"])} is not a safe sysctl`,
              ),
            ],
      ),
  },
  "Volume Types": {
    source: "Restricted",
    rule: SECURITY,
    fields: ["spec.volumes[*]"],
    allowed: ALLOWED_VOLUMES.join(", "),
    fix: `use ${ALLOWED_VOLUMES.join(", ")} (an NFS or EFS share through a PersistentVolumeClaim)`,
    check: (pod) =>
      arr(pod.value["volumes"]).flatMap((v, i) =>
        Object.keys(obj(v))
          .filter((k) => k !== "name" && k !== "hostPath" && !ALLOWED_VOLUMES.includes(k))
          .map((k) => atPod(pod, `volumes[${i}].${k}`, "is a volume type the Restricted profile refuses")),
      ),
  },
  "Privilege Escalation": {
    source: "Restricted",
    rule: SECURITY,
    fields: [`${CONTAINERS}.securityContext.allowPrivilegeEscalation`],
    allowed: "false",
    fix: "set it to false",
    check: eachContainer((c) =>
      sc(c)["allowPrivilegeEscalation"] === false
        ? []
        : [
            [
              "securityContext.allowPrivilegeEscalation",
              "is not false (Ray's images give their user passwordless sudo)",
            ],
          ],
    ),
  },
  "Running as Non-root": {
    source: "Restricted",
    rule: SECURITY,
    fields: ["spec.securityContext.runAsNonRoot", `${CONTAINERS}.securityContext.runAsNonRoot`],
    allowed: "true (the container's, else the pod's); the pod's never false",
    fix: "set runAsNonRoot: true",
    check: (pod) => [
      ...(sc(pod.value)["runAsNonRoot"] === false ? [atPod(pod, "securityContext.runAsNonRoot", "is false")] : []),
      ...eachContainer((c, p) =>
        (sc(c)["runAsNonRoot"] ?? sc(p)["runAsNonRoot"]) === true
          ? []
          : [["securityContext.runAsNonRoot", "is not true (nor the pod's)"]],
      )(pod),
    ],
  },
  "Running as Non-root user": {
    source: "Restricted",
    rule: SECURITY,
    fields: ["spec.securityContext.runAsUser", `${CONTAINERS}.securityContext.runAsUser`],
    allowed: "unset, non-zero",
    fix: "run as a non-zero uid (Ray's images: 1000)",
    check: (pod) => [
      ...(sc(pod.value)["runAsUser"] === 0 ? [atPod(pod, "securityContext.runAsUser", "is 0 (root)")] : []),
      ...eachContainer((c) => (sc(c)["runAsUser"] === 0 ? [["securityContext.runAsUser", "is 0 (root)"]] : []))(pod),
    ],
  },
  "Process namespace sharing": {
    source: "pack",
    rule: SECURITY,
    fields: ["spec.shareProcessNamespace"],
    allowed: "unset, false",
    fix: "remove it",
    check: (pod) =>
      pod.value["shareProcessNamespace"] === true
        ? [
            atPod(
              pod,
              "shareProcessNamespace",
              "is true: each container sees the others' processes, their environment and, through /proc/<pid>/root, their files",
            ),
          ]
        : [],
  },
};
