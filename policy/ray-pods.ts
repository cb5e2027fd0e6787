/**
 * Where KubeRay's resources keep their pods: every pod template of a RayJob, RayCluster and RayService (of any
 * `ray.io` version: the pod template is the same in each), and every container of each (init, regular and
 * ephemeral), each with its field path for the rules' messages. Pure.
 */
import { arr, obj, type Obj, type PolicyInput } from "./inputs";

/** The KubeRay kinds whose pods the rules check, and their Pulumi type tokens at `ray.io/v1`. */
export const RAY_TYPES = {
  RayJob: "kubernetes:ray.io/v1:RayJob",
  RayCluster: "kubernetes:ray.io/v1:RayCluster",
  RayService: "kubernetes:ray.io/v1:RayService",
} as const;
/** A KubeRay kind the rules check. */
export type RayKind = keyof typeof RAY_TYPES;

/**
 * The `ray.io` versions KubeRay v1.7's CRDs serve (`/work/shared/kuberay/v1.7.0/crds`): v1, and v1alpha1 for RayJob,
 * RayCluster and RayService, marked deprecated, whose schema has no `authOptions`.
 */
export const SERVED_RAY_VERSIONS = ["v1", "v1alpha1"] as const;

/** Every KubeRay type token of a served version; the rules also check any other `ray.io` version ({@link isRayType}). */
export const RAY_TYPE_LIST: readonly string[] = SERVED_RAY_VERSIONS.flatMap((v) =>
  Object.values(RAY_TYPES).map((t) => t.replace("ray.io/v1:", `ray.io/${v}:`)),
);

/** `kubernetes:ray.io/<version>:<kind>` for a kind the rules check, at any version. */
const RAY_TYPE = /^kubernetes:ray\.io\/([^:]+):(RayJob|RayCluster|RayService)$/;

/** Whether a Pulumi type token is a KubeRay kind the rules check, at any `ray.io` version. */
export const isRayType = (type: string) => RAY_TYPE.test(type);

/** The `ray.io` version of a KubeRay type token (`v1alpha1`), or undefined for another type. */
export const rayVersionOf = (type: string) => RAY_TYPE.exec(type)?.[1];

/** Where each kind keeps its Ray cluster's spec (head and worker groups, auth options). */
const CLUSTER_SPEC_PATH: { readonly [K in RayKind]: readonly string[] } = {
  RayJob: ["spec", "rayClusterSpec"],
  RayCluster: ["spec"],
  RayService: ["spec", "rayClusterConfig"],
};

/** Pod specs that may run beside a kind's Ray cluster (field path from the object's root to the pod template). */
const EXTRA_POD_TEMPLATES: { readonly [K in RayKind]: readonly string[][] } = {
  RayJob: [["spec", "submitterPodTemplate"]],
  RayCluster: [],
  RayService: [],
};

/** A part of an object and its field path (`spec.rayClusterSpec`). */
export interface At {
  readonly path: string;
  readonly value: Obj;
}

/** The KubeRay kind of a type token at any `ray.io` version, or undefined for another type. */
export const rayKindOf = (type: string) => RAY_TYPE.exec(type)?.[2] as RayKind | undefined;

const dig = (root: Obj, keys: readonly string[]): Obj => keys.reduce((o, k) => obj(o[k]), root);

/**
 * The Ray cluster spec a KubeRay resource creates; undefined when it creates none (a RayJob that names an existing
 * cluster with `clusterSelector` and carries no `rayClusterSpec`: that cluster is checked on its own).
 */
export function rayClusterSpec(r: PolicyInput): At | undefined {
  const kind = rayKindOf(r.type);
  if (!kind) return undefined;
  const keys = CLUSTER_SPEC_PATH[kind];
  const spec = obj(r.props["spec"]);
  if (kind === "RayJob" && spec["rayClusterSpec"] === undefined && spec["clusterSelector"] !== undefined)
    return undefined;
  return { path: keys.join("."), value: dig(r.props as Obj, keys) };
}

/** A pod template's spec: its role (head, worker group, submitter), the field path of its `spec`, its metadata. */
export interface PodAt extends At {
  readonly role: string;
  /** The template's `metadata` (annotations) and its field path. */
  readonly meta: At;
}

/** The pod of a template at `path` (`….template`) in `template`. */
const podAt = (role: string, path: string, template: Obj): PodAt => ({
  role,
  path: `${path}.spec`,
  value: obj(template["spec"]),
  meta: { path: `${path}.metadata`, value: obj(template["metadata"]) },
});

/** Every pod spec of a KubeRay resource: head, each worker group, and the RayJob's submitter template if given. */
export function rayPods(r: PolicyInput): PodAt[] {
  const kind = rayKindOf(r.type);
  const cluster = rayClusterSpec(r);
  if (!kind) return [];
  const pods: PodAt[] = [];
  if (cluster) {
    const head = `${cluster.path}.headGroupSpec.template`;
    pods.push(podAt("head", head, dig(cluster.value, ["headGroupSpec", "template"])));
    arr(cluster.value["workerGroupSpecs"]).forEach((g, i) =>
      pods.push(
        podAt(
          `worker group ${String(obj(g)["groupName"] ?? i)}`,
          `${cluster.path}.workerGroupSpecs[${i}].template`,
          dig(obj(g), ["template"]),
        ),
      ),
    );
  }
  for (const keys of EXTRA_POD_TEMPLATES[kind]) {
    const template = dig(r.props as Obj, keys);
    if (Object.keys(template).length) pods.push(podAt("submitter", keys.join("."), template));
  }
  return pods;
}

/** The pod spec fields that hold containers. */
export const CONTAINER_LISTS = ["initContainers", "containers", "ephemeralContainers"] as const;

/** One container of a pod: its path (`….spec.initContainers[0]`), its name, and the pod it runs in. */
export interface ContainerAt extends At {
  readonly name: string;
  readonly pod: PodAt;
}

/** Every container of a pod: init, regular and ephemeral. */
export const podContainers = (pod: PodAt): ContainerAt[] =>
  CONTAINER_LISTS.flatMap((field) =>
    arr(pod.value[field]).map((c, i) => ({
      path: `${pod.path}.${field}[${i}]`,
      name: String(obj(c)["name"] ?? i),
      value: obj(c),
      pod,
    })),
  );

/** Every container of every pod of a KubeRay resource. */
export const rayContainers = (r: PolicyInput): ContainerAt[] => rayPods(r).flatMap(podContainers);
