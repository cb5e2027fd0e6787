/**
 * The deploy simulation's placement rule: each Ray pod a RayJob (or RayCluster, RayService) asks for can land on some
 * node group of the program: the node group's labels match the pod's `nodeSelector`, the pod tolerates every taint
 * that keeps pods off (NoSchedule, NoExecute), and the nodes offer the EFA interfaces and hugepages it requests. A job
 * rendered against another config's pools selects a pool label no node group carries: KubeRay creates its pods, and
 * they stay Pending for ever. Pure: it reads the resource graph.
 *
 * Only where the program makes node groups: on a cluster the program does not make, its nodes are not in the graph.
 */
import { EFA_RESOURCE, HUGEPAGES_2MI_RESOURCE } from "../catalog/efa";
import { CHART_PINS } from "../platform/addons";
import type { DeployNode, DeployProblem } from "./order";

const NODE_GROUP = "aws:eks/nodeGroup:NodeGroup";
const LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate";
const HELM_RELEASE = "kubernetes:helm.sh/v3:Release";
const RAY_KINDS = new Set(["RayJob", "RayCluster", "RayService"]);

/** A node group as the scheduler sees its nodes: labels (its own and the ones EKS adds), taints, extended resources. */
interface NodeShape {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly { key: string; value?: string; effect: string }[];
  /** Why each extended resource the simulation models is not on the nodes; a name absent here is offered. */
  readonly lacks: Readonly<Partial<Record<ExtendedResource, string>>>;
}

/**
 * The extended resources a Ray pod may request that only some nodes offer, and what a node needs to offer each: EFA
 * interfaces in its launch template and the EFA device plugin in the cluster (which advertises them), and 2 MiB
 * hugepages reserved at boot (the kubelet offers only pages that exist when it starts). GPUs are the device plugin's
 * on every GPU node, as the program's other checks assume.
 */
const EXTENDED = {
  [EFA_RESOURCE]: (lt: DeployNode | undefined, efaPlugin: boolean) =>
    !(lt?.inputs["networkInterfaces"] as { interfaceType?: string }[] | undefined)?.some(
      (i) => i.interfaceType === "efa",
    )
      ? "its launch template attaches no EFA interface"
      : efaPlugin
        ? undefined
        : "no EFA device plugin (aws-efa-k8s-device-plugin) in the program advertises its EFA interface",
  [HUGEPAGES_2MI_RESOURCE]: (lt: DeployNode | undefined) =>
    /vm\.nr_hugepages/.test(userDataOf(lt)) ? undefined : "its user data reserves no hugepages (vm.nr_hugepages)",
} as const satisfies Readonly<Record<string, (lt: DeployNode | undefined, efaPlugin: boolean) => string | undefined>>;
type ExtendedResource = keyof typeof EXTENDED;

/** A launch template's user data, decoded (base64, as the provider takes it). */
const userDataOf = (lt: DeployNode | undefined) =>
  typeof lt?.inputs["userData"] === "string" ? Buffer.from(lt.inputs["userData"], "base64").toString("utf8") : "";

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

/** The launch template a node group depends on, if the graph has it. */
const launchTemplateOf = (n: DeployNode, nodes: readonly DeployNode[]) =>
  nodes.find((t) => t.type === LAUNCH_TEMPLATE && n.dependsOn.includes(t.name));

/** Why the group's nodes lack each extended resource, from its launch template and the program's device plugins. */
function lacksOf(n: DeployNode, nodes: readonly DeployNode[]): NodeShape["lacks"] {
  const lt = launchTemplateOf(n, nodes);
  const efaPlugin = nodes.some(
    (r) => r.type === HELM_RELEASE && r.inputs["chart"] === CHART_PINS.efaDevicePlugin.chart,
  );
  const lacks: Partial<Record<ExtendedResource, string>> = {};
  for (const r of Object.keys(EXTENDED) as ExtendedResource[]) {
    const why = EXTENDED[r](lt, efaPlugin);
    if (why) lacks[r] = why;
  }
  return lacks;
}

/** The labels every node of the group has: its `labels`, and the well-known ones EKS sets from its inputs. */
function nodeShape(n: DeployNode, nodes: readonly DeployNode[]): NodeShape {
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
  return { name: n.name, labels, taints, lacks: lacksOf(n, nodes) };
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}
/** The part of a pod template the simulation reads. */
export interface PodTemplate {
  spec?: {
    nodeSelector?: Record<string, string>;
    tolerations?: Toleration[];
    serviceAccountName?: string;
    containers?: { resources?: { requests?: Record<string, unknown>; limits?: Record<string, unknown> } }[];
  };
}

/** The extended resources of {@link EXTENDED} the pod's containers request (or limit). */
const extendedRequests = (pod: PodTemplate): ExtendedResource[] =>
  (Object.keys(EXTENDED) as ExtendedResource[]).filter((r) =>
    (pod.spec?.containers ?? []).some((c) => r in (c.resources?.requests ?? {}) || r in (c.resources?.limits ?? {})),
  );

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
  const missing = extendedRequests(pod).filter((r) => node.lacks[r]);
  if (missing.length) return missing.map((r) => `requests ${r}, but ${node.lacks[r]}`).join(", and ");
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
  const groups = nodes.filter((n) => n.type === NODE_GROUP).map((n) => nodeShape(n, nodes));
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
