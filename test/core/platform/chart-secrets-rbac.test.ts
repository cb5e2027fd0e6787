/**
 * No chart of the platform reads Secrets cluster-wide, save the one listed with its reason: each chart's RBAC templates
 * at its pinned version (vendored under test/fixtures/charts/, README there), evaluated with the chart's defaults and
 * the values the prod plan sets (`./helm-rbac-guards.ts`: the guards around the `secrets` rules, not a full Helm).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { CHART_PINS } from "../../../core/platform/addons";
import { planPlatform, type PlatformPlan } from "../../../core/platform-plan";
import { KUEUE_CHART } from "../../../core/platform/queueing";
import { OBSERVABILITY_CHARTS } from "../../../core/observability/charts";
import { repoStack } from "../../helpers/fixtures";
import { chartTemplates, mergeValues as merge, secretsRulesOf, type Helpers } from "./helm-rbac-guards";

const FIXTURES = resolve(__dirname, "../../fixtures/charts");
/** KubeRay's operator chart values, read from the reference material beside the repository, never a copy. */
const KUBERAY_VALUES = resolve(
  process.env["KUBERAY_CHART"] ?? resolve(__dirname, "../../../../shared/kuberay/v1.7.0/helm-kuberay-operator"),
  "values.yaml",
);
type Values = Record<string, unknown>;
const yamlAt = (path: string) => parse(readFileSync(resolve(FIXTURES, path), "utf8")) as Values;
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : v ? [v] : []);
/**
 * kube-state-metrics 8.4.0 `kube-state-metrics.collectors` (templates/_helpers.tpl): `collectors` less
 * `collectorsExclude`, then `collectorsExtra`, deduplicated.
 */
const ksmCollectors = (v: Values) => {
  const exclude = asList(v["collectorsExclude"]);
  const kept = asList(v["collectors"]).filter((c) => !exclude.includes(c));
  return [...new Set([...kept, ...asList(v["collectorsExtra"])])];
};
const HELPERS: Helpers = { "kube-state-metrics.collectors": ksmCollectors };

/** A chart we install: where its templates are vendored, its RBAC templates, and the values it renders with. */
interface ChartCase {
  readonly dir: string;
  readonly files: readonly string[];
  readonly values: Values;
}

/** Every chart (and kube-prometheus-stack subchart) the plan installs, with its values merged over its defaults. */
function chartsOf(plan: PlatformPlan): Record<string, ChartCase> {
  const kps = plan.observability!.helm.kubePrometheusStack.values as Values;
  const kpsDefaults = yamlAt("../kube-prometheus-stack-88.5.3/values.yaml");
  const sub = (name: string, defaults: string) =>
    merge(merge(yamlAt(defaults), kpsDefaults[name] as Values), kps[name] as Values);
  return {
    "kuberay-operator": {
      dir: `kuberay-operator-${CHART_PINS.kuberayOperator.version}`,
      files: ["role.yaml", "multiple_namespaces_role.yaml", "leader_election_role.yaml"].concat(
        ["rayjob", "rayservice", "raycronjob"].flatMap((k) => [
          `ray_${k}_editor_role.yaml`,
          `ray_${k}_viewer_role.yaml`,
        ]),
      ),
      values: merge(yamlAt(KUBERAY_VALUES), plan.helm.kuberayOperator.values as Values),
    },
    "kube-prometheus-stack": {
      dir: `kube-prometheus-stack-${OBSERVABILITY_CHARTS.kubePrometheusStack.version}`,
      files: ["prometheus-operator/clusterrole.yaml", "prometheus-operator/aggregate-clusterroles.yaml"].concat(
        "prometheus/clusterrole.yaml",
        ...["clusterrole.yaml", "role.yaml"].map((f) => `prometheus-operator/admission-webhooks/job-patch/${f}`),
      ),
      values: merge(kpsDefaults, kps),
    },
    "kube-state-metrics": {
      dir: "kube-state-metrics-8.4.0",
      files: ["role.yaml"],
      values: sub("kube-state-metrics", "../kube-prometheus-stack-88.5.3/kube-state-metrics-8.4.0-values.yaml"),
    },
    grafana: {
      dir: "grafana-12.11.1",
      files: ["clusterrole.yaml", "role.yaml"],
      values: sub("grafana", "grafana-12.11.1/values.yaml"),
    },
    // The charts below have no `secrets` line in any template (README: the scan); their roles are read all the same.
    "prometheus-node-exporter": { dir: "prometheus-node-exporter-4.56.1", files: ["clusterrole.yaml"], values: {} },
    "cluster-autoscaler": {
      dir: `cluster-autoscaler-${CHART_PINS.clusterAutoscaler.version}`,
      files: ["clusterrole.yaml", "role.yaml"],
      values: {},
    },
    "nvidia-device-plugin": {
      dir: `nvidia-device-plugin-${CHART_PINS.nvidiaDevicePlugin.version}`,
      files: ["role.yml"],
      values: {},
    },
    "dcgm-exporter": {
      dir: `dcgm-exporter-${OBSERVABILITY_CHARTS.dcgmExporter.version}`,
      files: ["clusterrole.yaml", "role.yaml"],
      values: {},
    },
    kueue: {
      dir: `kueue-${KUEUE_CHART.version}`,
      files: ["rbac/role.yaml", "rbac/manager_secrets_role.yaml"],
      values: {},
    },
  };
}

/** Every `secrets` rule each chart renders, as `chart template kind verbs`. */
function secretsRules(charts: Record<string, ChartCase>): string[] {
  return Object.entries(charts).flatMap(([chart, c]) => {
    const { helpersText, templates } = chartTemplates(resolve(FIXTURES, c.dir), c.files);
    return templates.flatMap((t) =>
      secretsRulesOf(t, { helpersText, values: c.values, helpers: HELPERS }).map(
        (r) => `${chart} ${r.template} ${r.kind} [${r.verbs.join(",")}]`,
      ),
    );
  });
}
/** The platform's own roles for kube-prometheus-stack's accounts that grant `secrets`, in the same form. */
function ourSecretsRules(plan: PlatformPlan): string[] {
  return plan.observability!.rbac.flatMap((g) =>
    g.rules
      .filter((r) => r.resources?.includes("secrets"))
      .map((r) => `ray-gpu ${g.name} ${g.scope === "cluster" ? "ClusterRole" : "Role"} [${r.verbs.join(",")}]`),
  );
}
const clusterWide = (rules: readonly string[]) => rules.filter((r) => r.includes(" ClusterRole "));

/** The cluster-wide Secrets rules that remain in prod, each with why it cannot go: none. */
const JUSTIFIED: Readonly<Record<string, string>> = {};

describe("chart RBAC: who reads Secrets", () => {
  const plan = planPlatform(repoStack("prod"));
  const charts = chartsOf(plan);

  it("reads the RBAC templates of the versions the plan pins", () => {
    const kps = yamlAt("kube-prometheus-stack-88.5.3/Chart.yaml") as {
      dependencies: { name: string; version: string }[];
    };
    const deps = Object.fromEntries(kps.dependencies.map((d) => [d.name, d.version]));
    for (const name of ["kube-state-metrics", "grafana", "prometheus-node-exporter"])
      expect(charts[name]!.dir).toBe(`${name}-${deps[name]}`);
    expect(plan.queue).toBeDefined();
    expect(plan.observability).toBeDefined();
  });

  it("lists no cluster-wide Secrets rule for the prod plan, the chart's nor ours", () => {
    expect(clusterWide([...secretsRules(charts), ...ourSecretsRules(plan)])).toEqual(Object.keys(JUSTIFIED));
  });

  it("keeps the Secrets rules it moved in namespaced Roles: the operators' in the namespaces they watch", () => {
    expect([...secretsRules(charts), ...ourSecretsRules(plan)].filter((r) => !r.includes(" ClusterRole "))).toEqual([
      "kuberay-operator multiple_namespaces_role.yaml Role [create,delete,get,list,update,watch]",
      "grafana role.yaml Role [get,watch,list]",
      "kueue rbac/manager_secrets_role.yaml Role [get,list,update,watch]",
      "ray-gpu ray-gpu-prometheus-operator-namespaced Role [*]",
      "ray-gpu ray-gpu-prometheus-admission Role [get,create]",
    ]);
    expect(charts["kuberay-operator"]!.values["watchNamespace"]).toEqual([plan.workloadNamespace]);
    const operatorRoles = plan.observability!.rbac.find((g) => g.name === "ray-gpu-prometheus-operator-namespaced")!;
    expect(operatorRoles.namespaces).toEqual([plan.observability!.namespace, plan.workloadNamespace]);
  });

  it("finds the chart defaults' cluster-wide Secrets readers (the evaluator sees what it removes)", () => {
    const defaults = chartsOf(plan);
    defaults["kuberay-operator"] = {
      ...defaults["kuberay-operator"]!,
      values: yamlAt(KUBERAY_VALUES),
    };
    const ksm = defaults["kube-state-metrics"]!;
    defaults["kube-state-metrics"] = { ...ksm, values: { ...ksm.values, collectorsExclude: [] } };
    const grafana = defaults["grafana"]!;
    defaults["grafana"] = { ...grafana, values: merge(grafana.values, { rbac: { namespaced: false } }) };
    const kps = defaults["kube-prometheus-stack"]!;
    defaults["kube-prometheus-stack"] = { ...kps, values: merge(kps.values, { global: { rbac: { create: true } } }) };
    expect(clusterWide(secretsRules(defaults))).toEqual([
      "kuberay-operator role.yaml ClusterRole [create,delete,get,list,update,watch]",
      "kube-prometheus-stack prometheus-operator/clusterrole.yaml ClusterRole [*]",
      "kube-state-metrics role.yaml ClusterRole [list,watch]",
      "grafana clusterrole.yaml ClusterRole [get,watch,list]",
    ]);
  });

  it("mirrors the chart helpers it copies, and sets no free-form rules the evaluator cannot see", () => {
    const helpers = readFileSync(resolve(FIXTURES, "kube-state-metrics-8.4.0/templates/_helpers.tpl"), "utf8");
    expect(helpers).toContain("{{- if not (has . $exclude) }}");
    expect(helpers).toContain("{{- $final = concat $final $extra | mustUniq }}");
    // Every "secrets" in our values is the collector we turn off.
    const ours = JSON.stringify([plan.helm, plan.observability!.helm, plan.queue]);
    expect(ours.match(/secrets/g)).toEqual(["secrets"]);
    expect(ours).not.toMatch(/extraRules|extraClusterRoleRules|extraRoleRules/);
    // The operator's --namespaces comes from these keys (templates/prometheus-operator/deployment.yaml).
    const deployment = readFileSync(
      resolve(FIXTURES, "kube-prometheus-stack-88.5.3/templates/prometheus-operator/deployment.yaml"),
      "utf8",
    );
    expect(deployment).toMatch(
      /with \$\.Values\.prometheusOperator\.namespaces[\s\S]*\.releaseNamespace[\s\S]*\.additional/,
    );
    const kpsOperator = (plan.observability!.helm.kubePrometheusStack.values as Values)["prometheusOperator"] as Values;
    expect(kpsOperator["namespaces"]).toEqual({ releaseNamespace: true, additional: [plan.workloadNamespace] });
  });
});
