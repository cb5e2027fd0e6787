/**
 * Grafana's values in kube-prometheus-stack 88.5.3: its admin login comes from the platform's Secret (no password in
 * the values, none made by the chart), and its sidecars read the monitoring namespace only, with a Role there (every
 * dashboard ConfigMap of ours lives in it), instead of the chart's default of every namespace with a ClusterRole.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { GRAFANA_ADMIN, MONITORING_NAMESPACE, planObservability } from "../../../core/observability/charts";
import { ObservabilitySchema } from "../../../core/config/observability";
import { loadRayDashboards } from "../../../io/ray-dashboards";
import { monitoringObjects, rayDashboardConfigMaps } from "../../../workloads/observability/monitoring";
import { valueAt } from "../../helpers/helm-values";

const KPS = resolve(__dirname, "../../fixtures/kube-prometheus-stack-88.5.3");
const AMP = "https://aps-workspaces.us-east-1.amazonaws.com/workspaces/ws-12345678/api/v1/remote_write";

/** Every value held under `key` anywhere in `o`. */
function valuesUnder(o: unknown, key: string): unknown[] {
  if (!o || typeof o !== "object") return [];
  return Object.entries(o).flatMap(([k, v]) => [...(k === key ? [v] : []), ...valuesUnder(v, key)]);
}

describe("Grafana in kube-prometheus-stack", () => {
  const plan = planObservability(ObservabilitySchema.parse({}), "system", "create")!;
  const values = plan.helm.kubePrometheusStack.values;

  it("logs in from the platform's Secret: the chart's existingSecret and keys, no adminPassword", () => {
    expect(valueAt(values, ["grafana", "admin"])).toEqual({
      existingSecret: GRAFANA_ADMIN.secretName,
      userKey: GRAFANA_ADMIN.userKey,
      passwordKey: GRAFANA_ADMIN.passwordKey,
    });
    expect(valuesUnder(values, "adminPassword")).toEqual([]);
    expect(plan.grafanaAdmin).toEqual(GRAFANA_ADMIN);
    // the chart's own keys are the ones we fill (so its pod reads the password from our Secret)
    const chart = parse(readFileSync(join(KPS, "values.yaml"), "utf8")) as unknown;
    expect(valueAt(chart, ["grafana", "admin"])).toMatchObject({
      userKey: "admin-user",
      passwordKey: "admin-password",
    });
  });

  it("searches the monitoring namespace only, with namespaced RBAC, where every dashboard ConfigMap is", () => {
    expect(valuesUnder(values, "searchNamespace")).toEqual([MONITORING_NAMESPACE]);
    expect(valueAt(values, ["grafana", "rbac"])).toEqual({ namespaced: true });
    const dashboards = [
      ...monitoringObjects("ray-jobs", "prod", [], {}),
      ...rayDashboardConfigMaps(loadRayDashboards(), {}),
    ].filter((o) => o.kind === "ConfigMap" && o.metadata.labels?.["grafana_dashboard"] === "1");
    expect(dashboards.length).toBeGreaterThan(1);
    for (const d of dashboards) expect(d.metadata.namespace, d.metadata.name).toBe(MONITORING_NAMESPACE);
  });

  it("makes no admin Secret when Grafana does not run (remote write)", () => {
    const amp = planObservability(ObservabilitySchema.parse({ remoteWrite: { url: AMP } }), "system", "existing")!;
    expect(valueAt(amp.helm.kubePrometheusStack.values, ["grafana", "enabled"])).toBe(false);
    expect(amp.grafanaAdmin).toBeUndefined();
  });
});
