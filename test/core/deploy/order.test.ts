import { describe, expect, it } from "vitest";
import { checkDeployOrder, waitsFor } from "../../../core/deploy/order";
import { deployNode } from "../../helpers/deploy-graph";

/** A small graph shaped like the platform's: cluster, add-ons, a CPU node group in its component, a release. */
function graph(over: { cpuGroupWaitsFor?: string[]; corednsWaitsFor?: string[]; releaseWaitsFor?: string[] } = {}) {
  const node = deployNode;
  const addon = (addonName: string, dependsOn: string[] = ["eks"]) =>
    node("aws:eks/addon:Addon", addonName, { dependsOn, inputs: { addonName } });
  return [
    node("aws:eks/cluster:Cluster", "eks"),
    addon("vpc-cni"),
    addon("kube-proxy"),
    addon("coredns", ["eks", ...(over.corednsWaitsFor ?? ["system-ng"])]),
    node("ray-gpu:index:CpuNodeGroup", "system", { dependsOn: over.cpuGroupWaitsFor ?? ["vpc-cni", "kube-proxy"] }),
    node("aws:eks/nodeGroup:NodeGroup", "system-ng", {
      parent: "system",
      dependsOn: ["eks"],
      inputs: { taints: [], scalingConfig: { minSize: 1, maxSize: 2 } },
    }),
    node("aws:eks/nodeGroup:NodeGroup", "gpu-ng", {
      dependsOn: ["eks"],
      inputs: { taints: [{ key: "nvidia.com/gpu" }], scalingConfig: { minSize: 0 } },
    }),
    node("kubernetes:helm.sh/v3:Release", "kuberay-release", {
      dependsOn: over.releaseWaitsFor ?? ["system-ng", "coredns"],
      inputs: { chart: "kuberay-operator" },
    }),
    node("kubernetes:ray.io/v1:RayJob", "job", { dependsOn: ["kuberay-release"] }),
  ];
}

describe("deploy order", () => {
  it("passes the order that works: DaemonSet add-ons, the CPU nodes, CoreDNS, then the releases", () => {
    expect(checkDeployOrder(graph())).toEqual([]);
  });

  it("follows parents: a node group waits for what its component waits for", () => {
    const waits = waitsFor(graph({ cpuGroupWaitsFor: ["coredns"], corednsWaitsFor: [] }));
    expect([...waits.get("system-ng")!].sort()).toEqual(["coredns", "eks", "system"]);
  });

  it("finds the CoreDNS deadlock of pulumi-eks#1819: node groups that wait for the CoreDNS add-on", () => {
    const problems = checkDeployOrder(graph({ cpuGroupWaitsFor: ["vpc-cni", "coredns"], corednsWaitsFor: [] }));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.resource).toBe("coredns");
    expect(problems[0]!.message).toContain("node group system-ng waits for the add-on");
    expect(problems[0]!.message).toContain("create the add-on after the CPU node group");
  });

  it("refuses CoreDNS left unordered (it is ACTIVE only if nodes come by chance within 20 minutes)", () => {
    const [problem] = checkDeployOrder(graph({ corednsWaitsFor: [] }));
    expect(problem!.message).toMatch(/nothing orders it after a node group that can run it.*system-ng/);
  });

  it("refuses a release not ordered after the nodes and CoreDNS, and a custom resource before its CRDs", () => {
    const g = graph({ releaseWaitsFor: [] }).map((n) => (n.name === "job" ? { ...n, dependsOn: [] } : n));
    const problems = checkDeployOrder(g);
    expect(problems.map((p) => p.resource)).toEqual(["kuberay-release", "job"]);
    expect(problems[0]!.message).toContain("a node group that runs its pods (system-ng)");
    expect(problems[0]!.message).toContain("CoreDNS (coredns)");
    expect(problems[1]!.message).toContain("kuberay-operator chart installs its CRDs");
  });

  it("does not count a tainted or empty node group as one that runs the platform's pods", () => {
    const g = graph().map((n) =>
      n.name === "system-ng" ? { ...n, inputs: { taints: [], scalingConfig: { minSize: 0 } } } : n,
    );
    expect(checkDeployOrder(g).map((p) => p.resource)).toEqual(["coredns", "kuberay-release"]);
  });
});
