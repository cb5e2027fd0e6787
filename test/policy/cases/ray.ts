/**
 * Good and bad KubeRay inputs for the Ray and pod-security rules: every pod template (head, worker group, submitter)
 * of a RayJob, a RayCluster and a RayService, and every container list (init, regular, ephemeral).
 */
import type { RayKind } from "../../../policy/rules";
import { edited, rayObjects, type BadCase, type Editable, type GoodCase } from "./fixtures";

export const CLUSTER: Record<RayKind, { path: string; of: (props: Editable) => Editable }> = {
  RayJob: { path: "spec.rayClusterSpec", of: (p) => p.spec.rayClusterSpec },
  RayCluster: { path: "spec", of: (p) => p.spec },
  RayService: { path: "spec.rayClusterConfig", of: (p) => p.spec.rayClusterConfig },
};

export type Where = "head" | "worker" | "submitter";
const GROUP = { head: "headGroupSpec", worker: "workerGroupSpecs[0]" } as const;

export const podPath = (kind: RayKind, where: Where) =>
  where === "submitter" ? "spec.submitterPodTemplate.spec" : `${CLUSTER[kind].path}.${GROUP[where]}.template.spec`;

export function podOf(props: Editable, kind: RayKind, where: Where): Editable {
  if (where === "submitter") return props.spec.submitterPodTemplate.spec;
  const cluster = CLUSTER[kind].of(props);
  return (where === "head" ? cluster.headGroupSpec : cluster.workerGroupSpecs[0]).template.spec;
}

export const objects = rayObjects();
const SECRET = { name: "HF_TOKEN", value: "hf_abcdefghijklmnopqrstuvwxyz" };
const DIGEST = `rayproject/ray@sha256:${"a".repeat(64)}`;

/** A bad case that edits one pod of one kind; `path` is below that pod's spec. */
export function podCase(
  [variant, rule]: [string, string],
  [kind, where]: [RayKind, Where],
  edit: (pod: Editable) => void,
  path: string,
): BadCase {
  const input = edited(objects[kind], (p) => edit(podOf(p, kind, where)));
  return { variant: `${kind} ${where}: ${variant}`, rule, input, path: `${podPath(kind, where)}.${path}` };
}

/** An init container like the pod's first container, with `change` applied to it. */
const initLike = (pod: Editable, change: (c: Editable) => void) => {
  const c = { ...JSON.parse(JSON.stringify(pod.containers[0])), name: "setup" };
  change(c);
  pod.initContainers = [c];
};

const SECURITY = "ray-pod-security";
const HOST = "ray-pod-host-isolation";
const IMAGE = "ray-image-pinned";
const ENV = "no-plaintext-secret-env";

export const RAY_BAD_CASES: readonly BadCase[] = [
  podCase(
    ["init container may escalate", SECURITY],
    ["RayJob", "head"],
    (pod) => initLike(pod, (c) => (c.securityContext.allowPrivilegeEscalation = true)),
    "initContainers[0].securityContext.allowPrivilegeEscalation",
  ),
  podCase(
    ["init container runs as root", SECURITY],
    ["RayCluster", "worker"],
    (pod) => initLike(pod, (c) => (c.securityContext.runAsUser = 0)),
    "initContainers[0].securityContext.runAsUser",
  ),
  podCase(
    ["init container image :latest", IMAGE],
    ["RayService", "head"],
    (pod) => initLike(pod, (c) => (c.image = "busybox:latest")),
    "initContainers[0].image",
  ),
  podCase(
    ["init container plaintext secret env", ENV],
    ["RayJob", "worker"],
    (pod) => initLike(pod, (c) => (c.env = [SECRET])),
    "initContainers[0].env[0].value",
  ),
  podCase(
    ["ephemeral container privileged", SECURITY],
    ["RayJob", "head"],
    (pod) => {
      pod.ephemeralContainers = [{ ...JSON.parse(JSON.stringify(pod.containers[0])), name: "debug" }];
      pod.ephemeralContainers[0].securityContext.privileged = true;
    },
    "ephemeralContainers[0].securityContext.privileged",
  ),
  podCase(
    ["capability added", SECURITY],
    ["RayJob", "head"],
    (pod) => (pod.containers[0].securityContext.capabilities.add = ["NET_ADMIN"]),
    "containers[0].securityContext.capabilities.add",
  ),
  podCase(
    ["capabilities not dropped", SECURITY],
    ["RayCluster", "head"],
    (pod) => delete pod.containers[0].securityContext.capabilities.drop,
    "containers[0].securityContext.capabilities.drop",
  ),
  podCase(
    ["privilege escalation not off", SECURITY],
    ["RayJob", "worker"],
    (pod) => delete pod.containers[0].securityContext.allowPrivilegeEscalation,
    "containers[0].securityContext.allowPrivilegeEscalation",
  ),
  podCase(
    ["runAsNonRoot false", SECURITY],
    ["RayJob", "submitter"],
    (pod) => (pod.containers[0].securityContext.runAsNonRoot = false),
    "containers[0].securityContext.runAsNonRoot",
  ),
  podCase(
    ["seccomp Unconfined", SECURITY],
    ["RayService", "worker"],
    (pod) => (pod.containers[0].securityContext.seccompProfile = { type: "Unconfined" }),
    "containers[0].securityContext.seccompProfile.type",
  ),
  podCase(["hostNetwork", HOST], ["RayJob", "head"], (pod) => (pod.hostNetwork = true), "hostNetwork"),
  podCase(["hostPID", HOST], ["RayCluster", "worker"], (pod) => (pod.hostPID = true), "hostPID"),
  podCase(["hostIPC", HOST], ["RayService", "head"], (pod) => (pod.hostIPC = true), "hostIPC"),
  podCase(
    ["hostPath volume", HOST],
    ["RayJob", "worker"],
    (pod) => (pod.volumes = [{ name: "docker", hostPath: { path: "/var/run/docker.sock" } }, ...(pod.volumes ?? [])]),
    "volumes[0].hostPath",
  ),
  podCase(
    ["hostPort", HOST],
    ["RayCluster", "head"],
    (pod) => (pod.containers[0].ports = [{ containerPort: 8265, hostPort: 8265 }, ...(pod.containers[0].ports ?? [])]),
    "containers[0].ports[0].hostPort",
  ),
  podCase(
    ["image :latest", IMAGE],
    ["RayJob", "head"],
    (pod) => (pod.containers[0].image = "rayproject/ray:latest"),
    "containers[0].image",
  ),
  ...(["latest-gpu", "nightly-gpu", "LATEST", "main"] as const).map((tag) =>
    podCase(
      [`image :${tag}`, IMAGE],
      ["RayJob", "worker"],
      (pod) => (pod.containers[0].image = `rayproject/ray:${tag}`),
      "containers[0].image",
    ),
  ),
  podCase(
    ["image with an upper-case digest", IMAGE],
    ["RayJob", "head"],
    (pod) => (pod.containers[0].image = `rayproject/ray@sha256:${"A".repeat(64)}`),
    "containers[0].image",
  ),
  podCase(
    ["image without a tag", IMAGE],
    ["RayCluster", "worker"],
    (pod) => (pod.containers[0].image = "rayproject/ray"),
    "containers[0].image",
  ),
  podCase(
    ["image without a tag behind a registry port", IMAGE],
    ["RayJob", "submitter"],
    (pod) => (pod.containers[0].image = "registry.local:5000/ray"),
    "containers[0].image",
  ),
  podCase(
    ["image with a malformed digest", IMAGE],
    ["RayService", "worker"],
    (pod) => (pod.containers[0].image = "rayproject/ray@sha256:abc"),
    "containers[0].image",
  ),
  podCase(
    ["image not set", IMAGE],
    ["RayJob", "worker"],
    (pod) => delete pod.containers[0].image,
    "containers[0].image",
  ),
  podCase(
    ["worker plaintext secret env", ENV],
    ["RayJob", "worker"],
    (pod) => (pod.containers[0].env = [SECRET, ...(pod.containers[0].env ?? [])]),
    "containers[0].env[0].value",
  ),
  podCase(
    ["plaintext AWS key", ENV],
    ["RayService", "head"],
    (pod) => (pod.containers[0].env = [{ name: "AWS_ACCESS_KEY_ID", value: "AKIAABCDEFGHIJKLMNOP" }]),
    "containers[0].env[0].value",
  ),
  podCase(
    ["head GPU limit", "ray-head-no-gpu"],
    ["RayService", "head"],
    (pod) => (pod.containers[0].resources.limits["nvidia.com/gpu"] = "1"),
    'containers[0].resources.limits["nvidia.com/gpu"]',
  ),
  podCase(
    ["head GPU request", "ray-head-no-gpu"],
    ["RayCluster", "head"],
    (pod) =>
      (pod.containers[0].resources.requests = { ...pod.containers[0].resources.requests, "nvidia.com/gpu": "1" }),
    'containers[0].resources.requests["nvidia.com/gpu"]',
  ),
  {
    variant: "RayJob head advertises a GPU",
    rule: "ray-head-no-gpu",
    input: edited(objects.RayJob, (p) => (p.spec.rayClusterSpec.headGroupSpec.rayStartParams["num-gpus"] = "1")),
    path: "spec.rayClusterSpec.headGroupSpec.rayStartParams.num-gpus",
  },
  ...(["RayJob", "RayCluster", "RayService"] as const).map((kind) => ({
    variant: `${kind} without token auth`,
    rule: "ray-auth-token",
    input: edited(objects[kind], (p) => delete CLUSTER[kind].of(p).authOptions),
    path: `${CLUSTER[kind].path}.authOptions.mode`,
  })),
];

export const RAY_RULE_NAMES = ["ray-api-v1", "ray-auth-token", "ray-head-no-gpu", ENV, IMAGE, SECURITY, HOST];

export const RAY_GOOD_CASES: readonly GoodCase[] = [
  ...(["RayJob", "RayCluster", "RayService"] as const).map((kind) => ({
    name: `the prod stack's Ray cluster as a ${kind}`,
    rules: RAY_RULE_NAMES,
    input: objects[kind],
  })),
  {
    name: "images pinned by digest, and by tag behind a registry port",
    rules: [IMAGE],
    input: edited(objects.RayJob, (p) => {
      p.spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].image = DIGEST;
      p.spec.submitterPodTemplate.spec.containers[0].image = "registry.local:5000/ray:2.58.0";
    }),
  },
  {
    name: "a RayJob on an existing cluster (clusterSelector, no rayClusterSpec): that RayCluster is checked instead",
    rules: RAY_RULE_NAMES,
    input: edited(objects.RayJob, (p) => {
      delete p.spec.rayClusterSpec;
      p.spec.clusterSelector = { "ray.io/cluster": "shared" };
    }),
  },
];
