import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import {
  addonsOfStage,
  CHART_PINS,
  CLUSTER_AUTOSCALER_IMAGES,
  clusterAutoscalerRelease,
  EKS_ADDONS,
  kuberayOperatorRelease,
} from "../../../core/platform/addons";
import { EKS_VERSIONS } from "../../../core/catalog/eks-versions";
import { planPlatform } from "../../../core/platform-plan";
import { repoStack } from "../../helpers/fixtures";
import { keysNotInChart } from "../../helpers/helm-values";

const CA_VALUES = resolve(__dirname, "../../fixtures/cluster-autoscaler-9.59.0/values.yaml");

describe("cluster add-ons", () => {
  it("installs the KubeRay operator for the workload namespace only on the platform, cluster-wide when none is named", () => {
    const plan = planPlatform(repoStack("prod"));
    expect(plan.helm.kuberayOperator.values).toMatchObject({
      singleNamespaceInstall: true,
      watchNamespace: [plan.workloadNamespace],
    });
    expect(kuberayOperatorRelease("system").values["singleNamespaceInstall"]).toBeUndefined();
    expect(kuberayOperatorRelease(undefined, ["a", "b"]).values["watchNamespace"]).toEqual(["a", "b"]);
  });

  it("pins a Cluster Autoscaler release of the same minor for every Kubernetes version EKS runs", () => {
    expect(Object.keys(CLUSTER_AUTOSCALER_IMAGES).sort()).toEqual(Object.keys(EKS_VERSIONS).sort());
    for (const [minor, tag] of Object.entries(CLUSTER_AUTOSCALER_IMAGES))
      expect(tag).toMatch(new RegExp(`^v${minor.replace(".", "\\.")}\\.\\d+$`));
  });

  it.each(["dev", "prod"] as const)("runs the autoscaler of the %s cluster's own minor", (stack) => {
    const plan = planPlatform(repoStack(stack));
    const version = plan.cluster.mode === "create" ? plan.cluster.kubernetesVersion : "";
    const tag = (plan.helm.clusterAutoscaler.values["image"] as { tag: string }).tag;
    expect(tag.slice(1).split(".").slice(0, 2).join(".")).toBe(version);
  });

  it("keeps the chart's image for a cluster of unknown version (an adopted one, before deploy)", () => {
    const r = clusterAutoscalerRelease({ clusterName: "c", region: "us-east-1", environment: "dev" });
    expect(r.values["image"]).toBeUndefined();
  });

  it("sets only keys the pinned autoscaler chart's values file has", () => {
    const chart = parse(readFileSync(CA_VALUES, "utf8")) as Record<string, unknown>;
    const ours = clusterAutoscalerRelease({
      clusterName: "c",
      region: "us-east-1",
      environment: "prod",
      cpuPool: "system",
      kubernetesVersion: "1.36",
    }).values;
    expect(keysNotInChart(chart, ours, ["nodeSelector", "extraArgs"])).toEqual([]);
    expect(CHART_PINS.clusterAutoscaler.version).toBe("9.59.0");
  });

  it("creates the DaemonSet add-ons before the nodes, and the Deployment ones after the CPU nodes", () => {
    expect(addonsOfStage("beforeNodes")).toEqual(["vpc-cni", "kube-proxy", "eks-pod-identity-agent"]);
    expect(addonsOfStage("afterCpuNodes")).toEqual(["coredns"]);
    for (const [name, a] of Object.entries(EKS_ADDONS))
      expect(a.stage, name).toBe(a.runs === "DaemonSet" ? "beforeNodes" : "afterCpuNodes");
  });
});
