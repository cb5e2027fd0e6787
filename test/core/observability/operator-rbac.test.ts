/**
 * The platform's roles for kube-prometheus-stack's accounts grant exactly the chart's rules, with the operator's
 * StatefulSets, ConfigMaps and Secrets moved into the namespaces it watches: each chart template at its pinned version
 * (test/fixtures/charts/kube-prometheus-stack-88.5.3) is rendered with the chart's RBAC turned back on and compared,
 * rule by rule, with ours.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { planPlatform } from "../../../core/platform-plan";
import {
  PROMETHEUS_STACK_ACCOUNTS,
  PROMETHEUS_STACK_FULLNAME,
  type RbacGrant,
  type RbacRule,
} from "../../../core/observability/operator-rbac";
import { repoStack } from "../../helpers/fixtures";
import { chartTemplates, mergeValues, renderedDocuments } from "../platform/helm-rbac-guards";

type Values = Record<string, unknown>;
const CHART = resolve(__dirname, "../../fixtures/charts/kube-prometheus-stack-88.5.3");
const DEFAULTS = parse(
  readFileSync(resolve(__dirname, "../../fixtures/kube-prometheus-stack-88.5.3/values.yaml"), "utf8"),
) as Values;
const plan = planPlatform(repoStack("prod"));
const observability = plan.observability!;
const ours = observability.helm.kubePrometheusStack.values as Values;

/** A rule as the set of permissions it grants: `group/resource verb` or `url verb`. */
const grants = (rules: readonly RbacRule[]) =>
  rules.flatMap((r) =>
    r.verbs.flatMap((v) =>
      r.nonResourceURLs
        ? r.nonResourceURLs.map((u) => `${u} ${v}`)
        : (r.apiGroups ?? []).flatMap((g) => (r.resources ?? []).map((res) => `${g}/${res} ${v}`)),
    ),
  );
const sorted = (xs: readonly string[]) => [...new Set(xs)].sort();

/** The rules a chart template renders with our values and the chart's RBAC on, from its first document. */
function chartRules(file: string): RbacRule[] {
  const values = mergeValues(mergeValues(DEFAULTS, ours), { global: { rbac: { create: true } } });
  const { helpersText, templates } = chartTemplates(CHART, [file]);
  const docs = renderedDocuments(templates[0]!, { helpersText, values, helpers: {} });
  expect(docs).toHaveLength(1);
  return (parse(docs[0]!) as { rules: RbacRule[] }).rules;
}
const oursFor = (account: string) => observability.rbac.filter((g) => g.serviceAccount.name === account);
const rulesOf = (gs: readonly RbacGrant[]) => gs.flatMap((g) => g.rules);

describe("kube-prometheus-stack RBAC made by the platform", () => {
  it("turns the chart's RBAC off and names its accounts", () => {
    expect(ours["global"]).toEqual({ rbac: { create: false } });
    expect(ours["fullnameOverride"]).toBe(PROMETHEUS_STACK_FULLNAME);
    expect((ours["prometheusOperator"] as Values)["serviceAccount"]).toEqual({
      create: true,
      name: PROMETHEUS_STACK_ACCOUNTS.operator,
    });
    // The admission job's account and webhook names are the fullname's, which the override fixes.
    const job = readFileSync(
      resolve(CHART, "templates/prometheus-operator/admission-webhooks/job-patch/job-patchWebhook.yaml"),
      "utf8",
    );
    expect(job).toContain('serviceAccountName: {{ template "kube-prometheus-stack.fullname" . }}-admission');
    expect(job).toContain('--webhook-name={{ template "kube-prometheus-stack.fullname" . }}-admission');
    expect(PROMETHEUS_STACK_ACCOUNTS.admission).toBe(`${PROMETHEUS_STACK_FULLNAME}-admission`);
    expect(PROMETHEUS_STACK_FULLNAME.length).toBeLessThanOrEqual(26); // the helper's `trunc 26`
  });

  it("grants the operator the chart's rules, its Secrets, ConfigMaps and StatefulSets only where it watches", () => {
    const operator = oursFor(PROMETHEUS_STACK_ACCOUNTS.operator);
    expect(sorted(grants(rulesOf(operator)))).toEqual(
      sorted(grants(chartRules("prometheus-operator/clusterrole.yaml"))),
    );
    const namespaced = operator.filter((g) => g.scope === "namespaced");
    expect(sorted(grants(rulesOf(namespaced)))).toEqual(sorted(["/configmaps *", "/secrets *", "apps/statefulsets *"]));
    const watched = (ours["prometheusOperator"] as Values)["namespaces"] as { additional: string[] };
    expect(namespaced[0]!.namespaces).toEqual([observability.namespace, ...watched.additional]);
  });

  it("grants Prometheus and the admission job the chart's rules, the webhooks narrowed to their name", () => {
    expect(sorted(grants(rulesOf(oursFor("prometheus"))))).toEqual(
      sorted(grants(chartRules("prometheus/clusterrole.yaml"))),
    );
    const admission = oursFor(PROMETHEUS_STACK_ACCOUNTS.admission);
    const job = "prometheus-operator/admission-webhooks/job-patch";
    expect(sorted(grants(rulesOf(admission)))).toEqual(
      sorted(grants([...chartRules(`${job}/clusterrole.yaml`), ...chartRules(`${job}/role.yaml`)])),
    );
    const webhooks = admission.find((g) => g.scope === "cluster")!.rules[0]!;
    expect(webhooks.resourceNames).toEqual([PROMETHEUS_STACK_ACCOUNTS.admission]);
    expect(admission.find((g) => g.scope === "namespaced")!.namespaces).toEqual([observability.namespace]);
  });

  it("holds no Secrets, ConfigMaps or StatefulSets in a cluster-wide grant", () => {
    const cluster = grants(rulesOf(observability.rbac.filter((g) => g.scope === "cluster")));
    expect(cluster.filter((p) => /\/(secrets|configmaps|statefulsets) /.test(p))).toEqual([]);
  });
});
