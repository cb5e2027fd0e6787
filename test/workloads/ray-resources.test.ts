/**
 * The Ray resource table: every kind renders to a resource with a row, the row renders the resource with its budget and
 * network policy, and the stack's checks reach every Ray resource among a workload's objects (and nothing else).
 */
import { describe, expect, it } from "vitest";
import { KIND_STRATEGIES } from "../../workloads/kinds/table";
import { checkRayResources, RAY_RESOURCES } from "../../workloads/ray-resources";
import { checkRayClusterSpec } from "../../workloads/raycluster/checks";
import type { KubeObject, RayJob } from "../../workloads/k8s/types";
import { planStack } from "../../workloads/stack";
import { configWith, runtime } from "../helpers/fixtures";

function devObjects(): { objects: KubeObject[]; pools: ReturnType<typeof planStack>["pools"] } {
  const plan = planStack(
    configWith(() => {}),
    { runtime },
  );
  return { objects: structuredClone(plan.objects[0]!.objects) as KubeObject[], pools: plan.pools };
}

describe("Ray resources", () => {
  it("has a row for the resource of every workload kind", () => {
    for (const [kind, strategy] of Object.entries(KIND_STRATEGIES))
      expect(Object.keys(RAY_RESOURCES), kind).toContain(strategy.rayResource);
  });

  it("renders a workload's RayJob, its disruption budget and its network policy, in that order", () => {
    const kinds = devObjects().objects.map((o) => o.kind);
    expect(kinds.slice(kinds.indexOf("RayJob"), kinds.indexOf("RayJob") + 3)).toEqual([
      "RayJob",
      "PodDisruptionBudget",
      "NetworkPolicy",
    ]);
  });

  it("checks each Ray resource among the objects, and only those", () => {
    const { objects, pools } = devObjects();
    expect(checkRayResources(objects, pools)).toEqual([]);
    const job = objects.find((o): o is RayJob => o.kind === "RayJob")!;
    job.spec.rayClusterSpec.headGroupSpec.rayStartParams["num-cpus"] = "4";
    const withConfigMapOnly = objects.filter((o) => o.kind === "ConfigMap");
    expect(checkRayResources(withConfigMapOnly, pools)).toEqual([]);
    expect(checkRayResources(objects, pools).map((i) => i.path)).toEqual([
      `RayJob ${job.metadata.name}: spec.rayClusterSpec.headGroupSpec.rayStartParams.num-cpus`,
    ]);
  });

  it("reports a cluster spec's problems at the path where its resource holds it", () => {
    const { objects, pools } = devObjects();
    const cluster = objects.find((o): o is RayJob => o.kind === "RayJob")!.spec.rayClusterSpec;
    cluster.workerGroupSpecs[0]!.minReplicas = cluster.workerGroupSpecs[0]!.maxReplicas + 1;
    const paths: string[] = [];
    checkRayClusterSpec(cluster, "spec.rayClusterConfig", pools, (path) => paths.push(path));
    expect(paths).toEqual([
      "spec.rayClusterConfig.workerGroupSpecs[0].minReplicas",
      "spec.rayClusterConfig.workerGroupSpecs[0].replicas",
    ]);
  });
});
