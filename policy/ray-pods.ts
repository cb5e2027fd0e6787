/**
 * Where KubeRay's resources keep their pods: every pod template of a RayJob, RayCluster and RayService (ray.io/v1),
 * and every container of each (init, regular and ephemeral), each with its field path for the rules' messages. Pure.
 */
import { arr, obj, type Obj, type PolicyInput } from "./inputs";

/** The KubeRay kinds whose pods the rules check, and their Pulumi type tokens. */
export const RAY_TYPES = {
  RayJob: "kubernetes:ray.io/v1:RayJob",
  RayCluster: "kubernetes:ray.io/v1:RayCluster",
  RayService: "kubernetes:ray.io/v1:RayService",
} as const;
/** A KubeRay kind the rules check. */
export type RayKind = keyof typeof RAY_TYPES;

/** Every KubeRay type token the rules know. */
export const RAY_TYPE_LIST: readonly string[] = Object.values(RAY_TYPES);

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

const kindOfType = (type: string) => (Object.keys(RAY_TYPES) as RayKind[]).find((k) => RAY_TYPES[k] === type);

const dig = (root: Obj, keys: readonly string[]): Obj => keys.reduce((o, k) => obj(o[k]), root);

/**
 * The Ray cluster spec a KubeRay resource creates; undefined when it creates none (a RayJob that names an existing
 * cluster with `clusterSelector` and carries no `rayClusterSpec`: that cluster is checked on its own).
 */
export function rayClusterSpec(r: PolicyInput): At | undefined {
  const kind = kindOfType(r.type);
  if (!kind) return undefined;
  const keys = CLUSTER_SPEC_PATH[kind];
  const spec = obj(r.props["spec"]);
  if (kind === "RayJob" && spec["rayClusterSpec"] === undefined && spec["clusterSelector"] !== undefined)
    return undefined;
  return { path: keys.join("."), value: dig(r.props as Obj, keys) };
}

/** A pod template's spec: its role (head, worker group, submitter) and the field path of its `spec`. */
export interface PodAt extends At {
  readonly role: string;
}

/** Every pod spec of a KubeRay resource: head, each worker group, and the RayJob's submitter template if given. */
export function rayPods(r: PolicyInput): PodAt[] {
  const kind = kindOfType(r.type);
  const cluster = rayClusterSpec(r);
  if (!kind) return [];
  const pods: PodAt[] = [];
  if (cluster) {
    const head = `${cluster.path}.headGroupSpec.template`;
    pods.push({ role: "head", path: `${head}.spec`, value: dig(cluster.value, ["headGroupSpec", "template", "spec"]) });
    arr(cluster.value["workerGroupSpecs"]).forEach((g, i) =>
      pods.push({
        role: `worker group ${String(obj(g)["groupName"] ?? i)}`,
        path: `${cluster.path}.workerGroupSpecs[${i}].template.spec`,
        value: dig(obj(g), ["template", "spec"]),
      }),
    );
  }
  for (const keys of EXTRA_POD_TEMPLATES[kind]) {
    const template = dig(r.props as Obj, keys);
    if (Object.keys(template).length)
      pods.push({ role: "submitter", path: `${keys.join(".")}.spec`, value: obj(template["spec"]) });
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
