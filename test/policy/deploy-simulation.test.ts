import { describe, expect, it } from "vitest";
import { deployNode, deploySimulationViolations, type StackResourceInput } from "../../policy/rules";
import { deploySimulationPolicy } from "../../policy/pack";

/** Resources as `validateStack` hands them: parents and dependencies are resources, not names. */
function stack(releaseWaits: boolean): StackResourceInput[] {
  const ref = (name: string) => ({ name });
  return [
    { type: "aws:eks/cluster:Cluster", name: "eks", props: {}, dependencies: [] },
    {
      type: "aws:eks/nodeGroup:NodeGroup",
      name: "system-ng",
      props: { taints: [], scalingConfig: { minSize: 1 } },
      parent: ref("system"),
      dependencies: [ref("eks")],
    },
    {
      type: "kubernetes:helm.sh/v3:Release",
      name: "kuberay-release",
      // the provider's Check has named it by preview time
      props: { chart: "kuberay-operator", name: "kuberay-release-0123abcd" },
      dependencies: [],
      propertyDependencies: releaseWaits ? { values: [ref("system-ng")] } : {},
    },
  ];
}

describe("the deploy simulation as a stack policy", () => {
  it("reads parents and property dependencies as the graph's edges", () => {
    expect(deployNode(stack(true)[1]!)).toMatchObject({ parent: "system", dependsOn: ["eks"] });
    expect(deployNode(stack(true)[2]!).dependsOn).toEqual(["system-ng"]);
  });

  it("refuses a release nothing orders after a node group, and passes it once it waits", () => {
    expect(deploySimulationViolations(stack(true))).toEqual([]);
    const [violation] = deploySimulationViolations(stack(false));
    expect(violation).toMatch(/^kuberay-release: release kuberay-operator .* not ordered after a node group/);
  });

  it("is a mandatory stack policy that reports each violation", () => {
    const policy = deploySimulationPolicy();
    const reported: string[] = [];
    const args = { resources: stack(false) } as unknown as Parameters<typeof policy.validateStack>[0];
    void policy.validateStack(args, (v) => reported.push(String(v)));
    expect(policy.enforcementLevel).toBe("mandatory");
    expect(reported).toHaveLength(1);
  });
});
