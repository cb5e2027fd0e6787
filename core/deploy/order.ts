/**
 * The deploy simulation's first half: the order in which `pulumi up` creates the stack's resources, and whether every
 * create that waits on the cluster can finish. Pure: it reads the resource graph `ray-gpu preview` records (type, name,
 * parent, dependencies, inputs) and knows nothing of Pulumi itself.
 *
 * What a resource waits for: its dependencies (explicit `dependsOn`, a component's expanded to its resources, and the
 * resources whose outputs it takes) and its parent, which waits for its own (the SDK registers a child only once its
 * parent's URN is known, and a component's URN only once its `dependsOn` are created).
 *
 * Readiness rules, each with its source, in {@link WAIT_RULES}.
 */
import { CHART_PINS, EKS_ADDONS } from "../platform/addons";
import { EBS_CSI, OBSERVABILITY_CHARTS } from "../observability/charts";
import { KUEUE_CHART } from "../platform/queueing";

/** One resource of the graph, as `ray-gpu preview` records it. */
export interface DeployNode {
  readonly type: string;
  readonly name: string;
  /** Name of the parent resource, or null. */
  readonly parent: string | null;
  /** Names of the resources it depends on. */
  readonly dependsOn: readonly string[];
  readonly inputs: Readonly<Record<string, unknown>>;
}

/** A create that cannot finish, or finishes only by chance. */
export interface DeployProblem {
  /** The resource whose create would fail. */
  readonly resource: string;
  /** What happens, and the fix. */
  readonly message: string;
}

const ADDON = "aws:eks/addon:Addon";
const NODE_GROUP = "aws:eks/nodeGroup:NodeGroup";
const HELM_RELEASE = "kubernetes:helm.sh/v3:Release";
const EKS_CLUSTER = "aws:eks/cluster:Cluster";

/** Managed add-ons that run a Deployment: ACTIVE only once a node runs their pods. */
export const DEPLOYMENT_ADDONS: readonly string[] = [
  ...Object.entries(EKS_ADDONS)
    .filter(([, a]) => a.runs === "Deployment")
    .map(([name]) => name),
  // ebs-csi-controller, 2 replicas (kubernetes-sigs/aws-ebs-csi-driver deploy/kubernetes/base/controller.yaml).
  EBS_CSI.addon,
];

/** API groups whose objects need a CRD one of our charts installs: the chart, by group. */
export const CRD_CHARTS: Readonly<Record<string, string>> = {
  "ray.io": CHART_PINS.kuberayOperator.chart,
  "kueue.x-k8s.io": KUEUE_CHART.chart,
  "monitoring.coreos.com": OBSERVABILITY_CHARTS.kubePrometheusStack.chart,
};

/** The API group of a Kubernetes type token (`kubernetes:ray.io/v1:RayJob` → `ray.io`); "" for others. */
const apiGroup = (type: string) => (type.startsWith("kubernetes:") ? (type.split(":")[1]?.split("/")[0] ?? "") : "");

/** Everything a resource waits for before its create starts: dependencies and parents, transitively. */
export function waitsFor(nodes: readonly DeployNode[]): ReadonlyMap<string, ReadonlySet<string>> {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const memo = new Map<string, Set<string>>();
  const visit = (name: string, path: ReadonlySet<string>): Set<string> => {
    const known = memo.get(name);
    if (known) return known;
    const node = byName.get(name);
    const direct = node ? [...node.dependsOn, ...(node.parent ? [node.parent] : [])] : [];
    const all = new Set<string>();
    for (const d of direct) {
      if (path.has(d)) continue; // Pulumi refuses cycles before anything runs; never loop here
      all.add(d);
      for (const t of visit(d, new Set([...path, d]))) all.add(t);
    }
    memo.set(name, all);
    return all;
  };
  for (const n of nodes) visit(n.name, new Set([n.name]));
  return memo;
}

/** A node group that can run the platform's Deployments as soon as it exists: no taint, at least one node. */
function hostsPlatformPods(n: DeployNode): boolean {
  const taints = (n.inputs["taints"] as unknown[] | undefined) ?? [];
  const min = Number((n.inputs["scalingConfig"] as { minSize?: number } | undefined)?.minSize ?? 0);
  return n.type === NODE_GROUP && taints.length === 0 && min >= 1;
}

/** What the rules see: the graph, each resource's waits, the node groups that host platform pods, the CoreDNS add-on. */
interface Graph {
  readonly nodes: readonly DeployNode[];
  readonly waits: ReadonlyMap<string, ReadonlySet<string>>;
  readonly hosts: readonly DeployNode[];
  /** The managed CoreDNS add-on, where the stack creates it. */
  readonly coredns: DeployNode | undefined;
  /**
   * Whether the program makes the cluster's nodes (an EKS cluster or a node group). On a cluster it does not make
   * (a kubeconfig of someone else's), nodes are there before the program runs and nothing can wait for them.
   */
  readonly makesNodes: boolean;
}

/** A wait rule: which resources it covers, and the problem with one of them, if any. */
interface WaitRule {
  readonly covers: (n: DeployNode) => boolean;
  readonly check: (n: DeployNode, g: Graph) => string | undefined;
  readonly source: string;
}

const waitsOn = (g: Graph, n: DeployNode, other: string) => g.waits.get(n.name)?.has(other) ?? false;
const hostNames = (g: Graph) => g.hosts.map((h) => h.name).join(", ") || "(none: give the CPU pool minNodes >= 1)";

/** A Deployment add-on: a node group it waits for must run its pods; a node group waiting for it never comes. */
function deploymentAddon(n: DeployNode, g: Graph): string | undefined {
  const addon = String(n.inputs["addonName"]);
  const blocked = g.nodes.filter((m) => m.type === NODE_GROUP && waitsOn(g, m, n.name));
  if (blocked.length)
    return (
      `add-on ${addon} runs a Deployment and stays DEGRADED until a node runs it, but ` +
      `${blocked.length === 1 ? "node group" : "node groups"} ${blocked.map((b) => b.name).join(", ")} ` +
      `${blocked.length === 1 ? "waits" : "wait"} for the add-on: its create times out after 20 minutes and no ` +
      `node is ever made; create the add-on after the CPU node group, and the node groups after the DaemonSet add-ons only`
    );
  if (g.hosts.some((h) => waitsOn(g, n, h.name))) return undefined;
  return (
    `add-on ${addon} runs a Deployment, but nothing orders it after a node group that can run it: it is ACTIVE only ` +
    `if nodes come within its 20-minute wait; make it depend on one of ${hostNames(g)}`
  );
}

/** A Helm release with `atomic`: waits for its pods, which need nodes, and for CoreDNS where the stack makes it. */
function helmRelease(n: DeployNode, g: Graph): string | undefined {
  const chart = String(n.inputs["chart"]);
  const missing: string[] = [];
  if (g.makesNodes && !g.hosts.some((h) => waitsOn(g, n, h.name)))
    missing.push(`a node group that runs its pods (${hostNames(g)})`);
  const dns = g.coredns;
  if (dns && !waitsOn(g, n, dns.name)) missing.push(`CoreDNS (${dns.name}), which its pods need to resolve services`);
  if (!missing.length) return undefined;
  return (
    `release ${chart} waits for its pods to be ready (atomic, 5-minute timeout) but is not ordered after ` +
    `${missing.join(" and ")}: it fails if they are not there in time; make it depend on them (on a RayGpuPlatform, ` +
    `pass \`{ platform }\` or \`platform.addonOptions()\`)`
  );
}

/** An object of a CRD our charts install: the API server refuses its kind until a release of the chart exists. */
function customObject(n: DeployNode, g: Graph): string | undefined {
  const group = apiGroup(n.type);
  const chart = CRD_CHARTS[group]!;
  const releases = g.nodes.filter((m) => m.type === HELM_RELEASE && String(m.inputs["chart"]).endsWith(chart));
  if (!releases.length || releases.some((r) => waitsOn(g, n, r.name))) return undefined;
  return (
    `its kind (${group}) exists only once the ${chart} chart installs its CRDs, but it does not wait for ` +
    `${releases.map((r) => r.name).join(" or ")}: the API server refuses it (no matches for kind); ` +
    `make it depend on the release (a RayWorkload ` +
    `on a RayGpuPlatform: pass \`{ platform }\` or \`platform.workloadOptions()\`)`
  );
}

/** The readiness rules, each with the source of the behaviour it models. */
export const WAIT_RULES: Readonly<Record<string, WaitRule>> = {
  deploymentAddon: {
    covers: (n) => n.type === ADDON && DEPLOYMENT_ADDONS.includes(String(n.inputs["addonName"])),
    check: deploymentAddon,
    source:
      "terraform-provider-aws internal/service/eks/addon.go: create waits for ACTIVE (20 min); pulumi/pulumi-eks#1819",
  },
  helmRelease: {
    covers: (n) => n.type === HELM_RELEASE,
    check: helmRelease,
    source: "pulumi-kubernetes helm.v3.Release: atomic implies wait for every pod ready; timeout 300 s by default",
  },
  customObject: {
    covers: (n) => apiGroup(n.type) in CRD_CHARTS,
    check: customObject,
    source: "Kubernetes API: a custom resource of a kind whose CRD is not installed is refused (no matches for kind)",
  },
};

/** Every create of the graph that cannot finish, in graph order. */
export function checkDeployOrder(nodes: readonly DeployNode[]): DeployProblem[] {
  const graph: Graph = {
    nodes,
    waits: waitsFor(nodes),
    hosts: nodes.filter(hostsPlatformPods),
    coredns: nodes.find((m) => m.type === ADDON && m.inputs["addonName"] === "coredns"),
    makesNodes: nodes.some((m) => m.type === NODE_GROUP || m.type === EKS_CLUSTER),
  };
  return nodes.flatMap((n) =>
    Object.values(WAIT_RULES)
      .filter((r) => r.covers(n))
      .map((r) => r.check(n, graph))
      .filter((m): m is string => m !== undefined)
      .map((message) => ({ resource: n.name, message })),
  );
}
