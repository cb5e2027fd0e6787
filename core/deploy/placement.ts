/**
 * The deploy simulation's placement rule: each Ray pod a RayJob (or RayCluster, RayService) asks for can land on some
 * node group of the program: the node group's labels match the pod's `nodeSelector` and the pod tolerates every taint
 * that keeps pods off (NoSchedule, NoExecute). A job rendered against another config's pools selects a pool label no
 * node group carries: KubeRay creates its pods, and they stay Pending for ever. Pure: it reads the resource graph.
 *
 * Only where the program makes node groups: on a cluster the program does not make, its nodes are not in the graph.
 */
import type { DeployNode, DeployProblem } from "./order";

const NODE_GROUP = "aws:eks/nodeGroup:NodeGroup";
const RAY_KINDS = new Set(["RayJob", "RayCluster", "RayService"]);

/** A node group as the scheduler sees its nodes: labels (its own and the ones EKS adds) and taints. */
interface NodeShape {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly { key: string; value?: string; effect: string }[];
}

/**
 * Labels whose values this graph cannot know (EKS fills them in at node launch): a selector on them is not refused.
 * eks.amazonaws.com/nodegroup is the node group's generated name; the zone and host come with the instance.
 */
const UNKNOWABLE = new Set([
  "eks.amazonaws.com/nodegroup",
  "eks.amazonaws.com/nodegroup-image",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
  "kubernetes.io/hostname",
]);

/** EKS's node taint effects (`NO_SCHEDULE`) as Kubernetes writes them (`NoSchedule`). */
const EFFECTS: Readonly<Record<string, string>> = {
  NO_SCHEDULE: "NoSchedule",
  NO_EXECUTE: "NoExecute",
  PREFER_NO_SCHEDULE: "PreferNoSchedule",
};

/** The labels every node of the group has: its `labels`, and the well-known ones EKS sets from its inputs. */
function nodeShape(n: DeployNode): NodeShape {
  const types = (n.inputs["instanceTypes"] as string[] | undefined) ?? [];
  const ami = String(n.inputs["amiType"] ?? "");
  const labels: Record<string, string> = {
    "kubernetes.io/os": "linux",
    "kubernetes.io/arch": ami.includes("ARM") ? "arm64" : "amd64",
    "eks.amazonaws.com/capacityType": String(n.inputs["capacityType"] ?? "ON_DEMAND"),
    ...(types.length === 1 ? { "node.kubernetes.io/instance-type": types[0]! } : {}),
    ...((n.inputs["labels"] as Record<string, string> | undefined) ?? {}),
  };
  const taints = ((n.inputs["taints"] as { key: string; value?: string; effect: string }[] | undefined) ?? []).map(
    (t) => ({ ...t, effect: EFFECTS[t.effect] ?? t.effect }),
  );
  return { name: n.name, labels, taints };
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}
/** The part of a pod template the simulation reads. */
export interface PodTemplate {
  spec?: { nodeSelector?: Record<string, string>; tolerations?: Toleration[]; serviceAccountName?: string };
}

/** Kubernetes' ToleratesTaint (k8s.io/api core/v1 toleration.go). */
function tolerates(t: Toleration, taint: NodeShape["taints"][number]): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (!t.key) return t.operator === "Exists";
  if (t.key !== taint.key) return false;
  return t.operator === "Exists" || (t.value ?? "") === (taint.value ?? "");
}

/** Why a pod cannot run on a node group's nodes, or undefined when it can. */
function misfit(pod: PodTemplate, node: NodeShape): string | undefined {
  const selector = pod.spec?.nodeSelector ?? {};
  const wrong = Object.entries(selector).filter(([k, v]) => !UNKNOWABLE.has(k) && node.labels[k] !== v);
  if (wrong.length) return `selects ${wrong.map(([k, v]) => `${k}=${v}`).join(", ")}`;
  const blocking = node.taints.filter((t) => t.effect !== "PreferNoSchedule");
  const untolerated = blocking.filter((taint) => !(pod.spec?.tolerations ?? []).some((t) => tolerates(t, taint)));
  if (untolerated.length) return `does not tolerate ${untolerated.map((t) => `${t.key}:${t.effect}`).join(", ")}`;
  return undefined;
}

/** The pod templates of a Ray resource's cluster spec: the head, then each worker group. */
export function rayPods(n: DeployNode): { role: string; template: PodTemplate }[] {
  const spec = n.inputs["spec"] as Record<string, unknown> | undefined;
  const cluster = (spec?.["rayClusterSpec"] ?? spec?.["rayClusterConfig"] ?? spec) as
    | {
        headGroupSpec?: { template?: PodTemplate };
        workerGroupSpecs?: { groupName?: string; template?: PodTemplate }[];
      }
    | undefined;
  if (!cluster) return [];
  return [
    ...(cluster.headGroupSpec?.template ? [{ role: "head pod", template: cluster.headGroupSpec.template }] : []),
    ...(cluster.workerGroupSpecs ?? [])
      .filter((w) => w.template)
      .map((w, i) => ({ role: `worker group ${w.groupName ?? i}'s pods`, template: w.template! })),
  ];
}

const kindOf = (type: string) => type.split(":")[2] ?? "";
/** Whether a graph node is a KubeRay resource with Ray pods (RayJob, RayCluster, RayService). */
export const isRayResource = (n: DeployNode): boolean =>
  n.type.startsWith("kubernetes:ray.io/") && RAY_KINDS.has(kindOf(n.type));

/** Every Ray pod of the graph that no node group of the graph can run. */
export function checkPlacement(nodes: readonly DeployNode[]): DeployProblem[] {
  const groups = nodes.filter((n) => n.type === NODE_GROUP).map(nodeShape);
  if (!groups.length) return [];
  const rays = nodes.filter(isRayResource);
  return rays.flatMap((n) =>
    rayPods(n).flatMap(({ role, template }) => {
      const reasons = groups.map((g) => ({ group: g.name, why: misfit(template, g) }));
      if (reasons.some((r) => r.why === undefined)) return [];
      return [
        {
          resource: n.name,
          message:
            `its ${role} can land on no node group of the program (${reasons.map((r) => `${r.group}: ${r.why}`).join("; ")}): ` +
            `it stays Pending; render the job against this program's pools (RayGpuPlatform.plan.pools) or add a node ` +
            `group with those labels and taints`,
        },
      ];
    }),
  );
}
