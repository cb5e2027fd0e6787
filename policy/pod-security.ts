/**
 * Pod and container security of every Ray pod (RayJob, RayCluster, RayService; head, workers, submitter; init,
 * regular and ephemeral containers): what Pod Security's `restricted` level asks, and no host namespaces, host paths
 * or host ports. Pure.
 */
import { arr, list, nonEmpty, obj, violation, type Obj, type PolicyInput, type ResourceRule } from "./inputs";
import { RAY_TYPE_LIST, rayContainers, rayPods } from "./ray-pods";

/** A problem found at a field below a container or pod: the field, what is wrong, the fix. */
type Finding = readonly [field: string, problem: string, fix: string];

const SECCOMP_TYPES: readonly unknown[] = ["RuntimeDefault", "Localhost"];

/** Each container check: a finding, or undefined when the container passes. */
const CONTAINER_CHECKS: readonly ((sc: Obj, pod: Obj) => Finding | undefined)[] = [
  (sc) =>
    sc["privileged"] === true
      ? ["securityContext.privileged", "is true: the container gets the node's devices", "remove it"]
      : undefined,
  (sc) =>
    sc["allowPrivilegeEscalation"] === false
      ? undefined
      : [
          "securityContext.allowPrivilegeEscalation",
          "is not false (Ray's images give their user passwordless sudo)",
          "set it to false",
        ],
  (sc) =>
    arr(obj(sc["capabilities"])["drop"]).includes("ALL")
      ? undefined
      : ["securityContext.capabilities.drop", "does not hold ALL", "set drop: [ALL]"],
  (sc) =>
    nonEmpty(obj(sc["capabilities"])["add"])
      ? [
          "securityContext.capabilities.add",
          `adds ${list(obj(sc["capabilities"])["add"]).map(String).join(", ")}`,
          "remove add: Ray needs no capability",
        ]
      : undefined,
  (sc, pod) =>
    (sc["runAsNonRoot"] ?? pod["runAsNonRoot"]) === true
      ? undefined
      : ["securityContext.runAsNonRoot", "is not true (nor the pod's)", "set runAsNonRoot: true"],
  (sc, pod) =>
    (sc["runAsUser"] ?? pod["runAsUser"]) === 0
      ? ["securityContext.runAsUser", "is 0 (root)", "run as a non-zero uid (Ray's images: 1000)"]
      : undefined,
  (sc, pod) =>
    SECCOMP_TYPES.includes(obj(sc["seccompProfile"] ?? pod["seccompProfile"])["type"])
      ? undefined
      : ["securityContext.seccompProfile.type", "is not RuntimeDefault (nor the pod's)", "set it to RuntimeDefault"],
];

/** What Pod Security's `restricted` level asks of each container, and no privileged container. */
function containerProblems(r: PolicyInput): string[] {
  return rayContainers(r).flatMap((c) => {
    const sc = obj(c.value["securityContext"]);
    const pod = obj(c.pod.value["securityContext"]);
    return CONTAINER_CHECKS.map((check) => check(sc, pod))
      .filter((f): f is Finding => f !== undefined)
      .map(([field, problem, fix]) =>
        violation(r, `${c.path}.${field}`, `(${c.pod.role}, container ${c.name}) ${problem}`, fix),
      );
  });
}

const HOST_NAMESPACES = [
  ["hostNetwork", "network"],
  ["hostPID", "process"],
  ["hostIPC", "IPC"],
] as const;

/** The host's namespaces, paths and ports stay out of every pod. */
function hostProblems(r: PolicyInput): string[] {
  const pods = rayPods(r).flatMap((pod) => [
    ...HOST_NAMESPACES.filter(([field]) => pod.value[field] === true).map(([field, what]) =>
      violation(
        r,
        `${pod.path}.${field}`,
        `is true: the ${pod.role} pod shares the node's ${what} namespace`,
        "remove it",
      ),
    ),
    ...arr(pod.value["volumes"]).flatMap((v, i) =>
      obj(v)["hostPath"] === undefined
        ? []
        : [
            violation(
              r,
              `${pod.path}.volumes[${i}].hostPath`,
              `mounts the node's ${String(obj(obj(v)["hostPath"])["path"])} into the ${pod.role} pod`,
              "use an emptyDir, a PersistentVolumeClaim or a CSI volume",
            ),
          ],
    ),
  ]);
  const ports = rayContainers(r).flatMap((c) =>
    arr(c.value["ports"]).flatMap((p, i) =>
      obj(p)["hostPort"]
        ? [violation(r, `${c.path}.ports[${i}].hostPort`, "binds a port on the node", "remove it")]
        : [],
    ),
  );
  return [...pods, ...ports];
}

/** Pod and container security rules of Ray pods. */
export const POD_SECURITY_RULES: readonly ResourceRule[] = [
  {
    name: "ray-pod-security",
    description:
      "Every container of every Ray pod runs as non-root, unprivileged, without privilege escalation, with all " +
      "capabilities dropped and none added, under the RuntimeDefault (or a Localhost) seccomp profile.",
    types: RAY_TYPE_LIST,
    check: containerProblems,
  },
  {
    name: "ray-pod-host-isolation",
    description: "No Ray pod uses the node's network, PID or IPC namespace, a hostPath volume or a host port.",
    types: RAY_TYPE_LIST,
    check: hostProblems,
  },
];
