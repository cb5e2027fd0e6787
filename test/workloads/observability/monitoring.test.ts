/**
 * What observability renders: the Ray PodMonitor and every PrometheusRule of both stacks accepted by the Prometheus
 * Operator's own CRDs (kube-prometheus-stack 88.5.3, as the API server would), each job's thresholds taken from its
 * plan, every Helm value a key of the pinned chart's values file, and every DCGM metric one the pinned exporter exports.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { planStack } from "../../../workloads/stack";
import { planObservability, OBSERVABILITY_CHARTS } from "../../../core/observability/charts";
import { METRICS, KSM_LABEL_ALLOWLIST } from "../../../core/observability/metrics";
import { DEFAULT_GPU_UTILIZATION_TARGET, type AlertRule } from "../../../core/observability/rules";
import { ObservabilitySchema } from "../../../core/config/observability";
import type { KubeObject, PrometheusRule, PodMonitor } from "../../../workloads/k8s/types";
import { CrdConformance } from "../../helpers/crd-conformance";
import { loadRayDashboards } from "../../../io/ray-dashboards";
import { rayDashboardConfigMaps } from "../../../workloads/observability/monitoring";
import { configWith, repoStack, runtime } from "../../helpers/fixtures";
import { keysNotInChart, valueAt } from "../../helpers/helm-values";

const KPS = resolve(__dirname, "../../fixtures/kube-prometheus-stack-88.5.3");
const DCGM = resolve(__dirname, "../../fixtures/dcgm-exporter-4.8.2");
const yamlFile = (path: string) => parse(readFileSync(path, "utf8")) as Record<string, unknown>;
const monitoringKinds = (objs: readonly KubeObject[]) =>
  objs.filter((o) => o.kind === "PodMonitor" || o.kind === "PrometheusRule");
const allObjects = (stack: "dev" | "prod") => {
  const plan = planStack(repoStack(stack), { runtime });
  return [...plan.shared, ...plan.objects.flatMap((o) => o.objects)];
};
const alert = (rule: PrometheusRule, name: string) =>
  rule.spec.groups.flatMap((g) => g.rules).find((r): r is AlertRule => "alert" in r && r.alert === name)!;

describe("monitoring objects against the Prometheus Operator's CRDs (v0.93.1)", () => {
  let crds: CrdConformance;
  beforeAll(async () => {
    crds = await CrdConformance.loadFiles(
      ["crd-podmonitors.yaml", "crd-prometheusrules.yaml"].map((f) => join(KPS, f)),
      "v1",
    );
  });

  it.each(["dev", "prod"] as const)("accepts the %s stack's PodMonitor and every PrometheusRule", (stack) => {
    const objs = monitoringKinds(allObjects(stack));
    const jobs = planStack(repoStack(stack), { runtime }).objects.length;
    expect(objs.filter((o) => o.kind === "PodMonitor")).toHaveLength(1);
    // the stack's rule and one per rendered job
    expect(objs.filter((o) => o.kind === "PrometheusRule")).toHaveLength(1 + jobs);
    for (const o of objs) expect(crds.validate(o), `${o.kind} ${o.metadata.name}`).toEqual([]);
  });

  it("refuses a PodMonitor with an unknown field and a rule without an expression (the check can fail)", () => {
    const pm = structuredClone(allObjects("prod").find((o) => o.kind === "PodMonitor")) as PodMonitor;
    (pm.spec.podMetricsEndpoints[0] as Record<string, unknown>)["scrapeEvery"] = "15s";
    expect(crds.validate(pm).join("\n")).toMatch(/scrapeEvery/);
    const rule = structuredClone(allObjects("prod").find((o) => o.kind === "PrometheusRule")) as PrometheusRule;
    delete (rule.spec.groups[0]!.rules[0] as { expr?: string }).expr;
    expect(crds.validate(rule)).not.toEqual([]);
  });

  it("scrapes Ray's metrics port on heads and workers only, and copies the job onto every series", () => {
    const pm = allObjects("prod").find((o) => o.kind === "PodMonitor") as PodMonitor;
    // The head declares the port; KubeRay v1.7.0 adds `metrics` (8080) to every worker's Ray container that lacks it
    // (ray-operator/controllers/ray/common/pod.go, DefaultWorkerPodTemplate).
    const job = allObjects("prod").find((o) => o.kind === "RayJob")!;
    expect(JSON.stringify(job)).toMatch(
      /"containerPort":8080[^}]*"name":"metrics"|"name":"metrics"[^}]*"containerPort":8080/,
    );
    expect(pm.spec.podMetricsEndpoints[0]).toMatchObject({ port: "metrics", path: "/metrics" });
    expect(pm.spec.podMetricsEndpoints[0]!.relabelings).toContainEqual({
      sourceLabels: ["__meta_kubernetes_pod_label_ray_gpu_io_workload"],
      targetLabel: "workload",
      action: "replace",
    });
    expect(pm.spec.selector.matchExpressions).toEqual([
      { key: "ray.io/node-type", operator: "In", values: ["head", "worker"] },
    ]);
  });
});

describe("each job's alerts come from its plan", () => {
  it("uses the kind's utilization target, the workload's own when set, and 75% of the pre-running deadline", () => {
    const plan = planStack(repoStack("prod"), { runtime });
    const rules = plan.objects
      .flatMap((o) => o.objects)
      .filter((o): o is PrometheusRule => o.kind === "PrometheusRule");
    for (const w of plan.workloads) {
      const rule = rules.find((r) => r.metadata.name === `${w.name}-alerts`)!;
      expect(alert(rule, "RayGpuJobLowUtilization").expr).toMatch(
        new RegExp(`workload="${w.name}"\\}\\) < ${DEFAULT_GPU_UTILIZATION_TARGET[w.kind]}$`),
      );
      // prod: 45 min deadline → pending for 33m45s
      expect(w.shape.lifecycle.preRunningDeadlineSeconds).toBe(2700);
      expect(alert(rule, "RayGpuJobPendingTooLong").for).toBe("33m45s");
    }
    const custom = configWith((c) => {
      c.workloads[0]!["gpuUtilizationTargetPercent"] = 70;
    });
    const ruleOf = planStack(custom, { runtime }).objects[0]!.objects.find((o) => o.kind === "PrometheusRule");
    expect(alert(ruleOf as PrometheusRule, "RayGpuJobLowUtilization").expr).toMatch(/ < 70$/);
  });

  it("renders no monitoring object when observability is off (the cluster may lack the CRDs)", () => {
    const off = configWith((c) => {
      c.platform["observability"] = { enabled: false };
    });
    const plan = planStack(off, { runtime });
    expect(monitoringKinds([...plan.shared, ...plan.objects.flatMap((o) => o.objects)])).toEqual([]);
  });
});

describe("observability charts", () => {
  const plan = planObservability(ObservabilitySchema.parse({}), "system", "create")!;

  it("sets only keys the pinned charts' values files have", () => {
    const kps = yamlFile(join(KPS, "values.yaml"));
    const ksm = yamlFile(join(KPS, "kube-state-metrics-8.4.0-values.yaml"));
    // persistentVolumeClaimRetentionPolicy is the StatefulSet's field: the values file sets `{}` and documents
    // whenDeleted and whenScaled as comments.
    const opaque = ["nodeSelector", "resources", "storageSpec", "sigv4", "persistentVolumeClaimRetentionPolicy"];
    // kube-state-metrics is a subchart: its keys are in its own values file
    const { "kube-state-metrics": ksmValues, ...kpsValues } = plan.helm.kubePrometheusStack.values;
    // grafana is a subchart too (12.11.1): `rbac.namespaced` is in its own values.yaml (grafana-community/helm-charts tag
    // grafana-12.11.1, charts/grafana/values.yaml line 26), which kube-prometheus-stack's grafana block does not repeat
    expect(keysNotInChart(kps, kpsValues, opaque)).toEqual(["grafana.rbac.namespaced"]);
    expect(keysNotInChart(ksm, ksmValues, opaque)).toEqual([]);
    const dcgm = yamlFile(join(DCGM, "values.yaml"));
    expect(keysNotInChart(dcgm, plan.helm.dcgmExporter.values, opaque)).toEqual([]);
    expect(OBSERVABILITY_CHARTS.kubePrometheusStack.version).toBe("88.5.3");
    expect(OBSERVABILITY_CHARTS.dcgmExporter.version).toBe("4.8.2");
  });

  it("sizes retention from the config, keeps the monitors and rules it renders, and lets kube-state-metrics export the job label", () => {
    const small = planObservability(
      ObservabilitySchema.parse({ retentionDays: 7, storageGiB: 100 }),
      "system",
      "create",
    )!;
    const spec = valueAt(small.helm.kubePrometheusStack.values, ["prometheus", "prometheusSpec"]) as Record<
      string,
      unknown
    >;
    expect(spec).toMatchObject({
      retention: "7d",
      retentionSize: "85GiB",
      podMonitorSelectorNilUsesHelmValues: false,
      ruleSelectorNilUsesHelmValues: false,
      serviceMonitorSelectorNilUsesHelmValues: false,
      storageSpec: {
        volumeClaimTemplate: {
          spec: { storageClassName: "ray-gpu-gp3", resources: { requests: { storage: "100Gi" } } },
        },
      },
    });
    expect(valueAt(small.helm.kubePrometheusStack.values, ["kube-state-metrics", "metricLabelsAllowlist"])).toEqual([
      ...KSM_LABEL_ALLOWLIST,
    ]);
    expect(valueAt(plan.helm.dcgmExporter.values, ["serviceMonitor", "honorLabels"])).toBe(true);
  });

  it("remote-writes to Amazon Managed Service for Prometheus with SigV4 and then runs no Grafana", () => {
    const url = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-1234abcd-5678/api/v1/remote_write";
    const amp = planObservability(ObservabilitySchema.parse({ remoteWrite: { url } }), "system", "existing")!;
    expect(amp.remoteWrite).toEqual({ kind: "amp", url, region: "us-east-1", workspaceId: "ws-1234abcd-5678" });
    expect(valueAt(amp.helm.kubePrometheusStack.values, ["prometheus", "prometheusSpec", "remoteWrite"])).toEqual([
      { url, sigv4: { region: "us-east-1" } },
    ]);
    expect(valueAt(amp.helm.kubePrometheusStack.values, ["grafana", "enabled"])).toBe(false);
    // an adopted cluster keeps its own default StorageClass
    expect(amp.storageClass).toBeUndefined();
    expect(ObservabilitySchema.safeParse({ remoteWrite: { url: "http://insecure" } }).success).toBe(false);
  });

  it("reads only DCGM metrics the pinned exporter exports by default", () => {
    const counters = readFileSync(join(DCGM, "metrics-configmap.yaml"), "utf8");
    const exported = new Set([...counters.matchAll(/^\s*(DCGM_FI_\w+)\s*,/gm)].map((m) => m[1]));
    const used = Object.values(METRICS).filter((m) => m.name.startsWith("DCGM_"));
    expect(used.length).toBeGreaterThan(0);
    for (const m of used) expect(exported.has(m.name), m.name).toBe(true);
  });

  it("reads the runtime's telemetry under the names runtime/ray_gpu/telemetry.py defines (Ray adds ray_ and _total)", () => {
    const source = readFileSync(resolve(__dirname, "../../../runtime/ray_gpu/telemetry.py"), "utf8");
    const block = /^METRICS = \{([\s\S]*?)^\}/m.exec(source)![1]!;
    const defined = [...block.matchAll(/"\w+": "(\w+)"/g)].map((m) => `ray_${m[1]}_total`).sort();
    const read = Object.values(METRICS)
      .filter((m) => m.source.includes("telemetry.py"))
      .map((m) => m.name)
      .sort();
    expect(read).toEqual(defined);
  });

  it("provisions Ray 2.58's own default, Ray Data and Ray Train dashboards for Grafana's sidecar, each within a ConfigMap", () => {
    const maps = rayDashboardConfigMaps(loadRayDashboards(), {});
    expect(maps.map((m) => m.metadata.name)).toEqual([
      "ray-gpu-ray-data-dashboard",
      "ray-gpu-ray-default-dashboard",
      "ray-gpu-ray-train-dashboard",
    ]);
    for (const m of maps) {
      expect(m.metadata).toMatchObject({ namespace: "monitoring", labels: { grafana_dashboard: "1" } });
      const [text] = Object.values(m.data);
      const board = JSON.parse(text!) as { uid: string; tags: string[] };
      expect(board.tags).toContain("rayVersion:2.58.0");
      // Kubernetes caps a ConfigMap at 1 MiB
      expect(Buffer.byteLength(text!)).toBeLessThan(1024 * 1024);
    }
  });
});
