/**
 * kube-prometheus-stack's default rules on EKS: the rule files that alert on control-plane jobs EKS hides are off with
 * our values, read from the pinned chart's own templates (each file's gating `if`), and the API server's stay on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { EKS_HIDDEN_COMPONENTS, planObservability } from "../../../core/observability/charts";
import { ObservabilitySchema } from "../../../core/config/observability";

const KPS = resolve(__dirname, "../../fixtures/kube-prometheus-stack-88.5.3");
const ruleFiles = readdirSync(KPS).filter((f) => f.startsWith("rules-1.14-"));

/** The `.Values.<key>.enabled` terms of a rule template's gating `{{- if and ... }}` line. */
function gatingKeys(template: string): string[] {
  const gate = template.split("\n").find((l) => l.startsWith("{{- if and "));
  if (!gate) throw new Error("no gating if");
  return [...gate.matchAll(/\.Values\.(\w+)\.enabled/g)].map((m) => m[1]!);
}

/** Jobs a rule template alerts on, by the chart's job variables (`$kubeProxyJob`) or a literal `job=~".*etcd.*"`. */
function jobsOf(template: string): string[] {
  const vars = [...template.matchAll(/\$(kube\w+?)Job\b/g)].map((m) => m[1]!);
  return [...new Set([...vars, ...(template.includes('job=~".*etcd.*"') ? ["kubeEtcd"] : [])])];
}

describe("kube-prometheus-stack on EKS", () => {
  const values = planObservability(ObservabilitySchema.parse({}), "system", "create")!.helm.kubePrometheusStack.values;
  const chartDefaults = parse(readFileSync(join(KPS, "values.yaml"), "utf8")) as Record<string, { enabled?: boolean }>;
  const enabled = (key: string) =>
    ((values[key] as { enabled?: boolean } | undefined)?.enabled ?? chartDefaults[key]?.enabled) !== false;

  it("turns off every default rule file that alerts on a control-plane job EKS hides", () => {
    const hidden = ruleFiles.filter((f) =>
      jobsOf(readFileSync(join(KPS, f), "utf8")).some((j) => j in EKS_HIDDEN_COMPONENTS),
    );
    expect(hidden).toHaveLength(5);
    for (const f of hidden) {
      const keys = gatingKeys(readFileSync(join(KPS, f), "utf8"));
      expect(
        keys.filter((k) => !enabled(k)),
        f,
      ).not.toHaveLength(0);
    }
  });

  it("keeps the API server's rules, which EKS lets Prometheus scrape", () => {
    const apiserver = readFileSync(join(KPS, "rules-1.14-kubernetes-system-apiserver.yaml"), "utf8");
    expect(apiserver).toContain("KubeAPIDown");
    expect(gatingKeys(apiserver).every(enabled)).toBe(true);
    expect(enabled("kubeApiServer")).toBe(true);
  });

  it("sets each hidden component off by a key the chart's values have", () => {
    for (const key of Object.keys(EKS_HIDDEN_COMPONENTS)) {
      expect(chartDefaults[key]?.enabled, key).toBe(true);
      expect(enabled(key), key).toBe(false);
    }
  });
});
