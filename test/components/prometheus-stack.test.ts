/**
 * PrometheusStack used alone, as an importer would: a release that makes no RBAC of its own comes with the roles of
 * its service accounts, created before it, or is refused with the fix when the program leaves them out.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ObservabilitySchema } from "../../core/config/observability";
import { planObservability } from "../../core/observability/charts";
import { settlePreview, setupPulumiMocks, type RecordedResource } from "../helpers/pulumi-mocks";

const plan = planObservability(ObservabilitySchema.parse({}), "system", "create", "ray-jobs")!;

describe("PrometheusStack alone", () => {
  let recorded: RecordedResource[];
  let PrometheusStack: typeof import("../../components/observability.js").PrometheusStack;
  beforeAll(async () => {
    recorded = await setupPulumiMocks({}, "dev");
    ({ PrometheusStack } = await import("../../components/observability.js"));
  });

  it("refuses a release without chart RBAC when no roles are given", () => {
    expect(() => new PrometheusStack("bare", { release: plan.helm.kubePrometheusStack })).toThrow(
      /PrometheusStack bare: its release makes no RBAC of its own .* pass rbac: planObservability\(\.\.\.\)\.rbac/,
    );
  });

  it("creates the planned roles, and the release waits for every one", async () => {
    new PrometheusStack("kps", { release: plan.helm.kubePrometheusStack, rbac: plan.rbac });
    await settlePreview();
    const release = recorded.find((r) => r.type === "kubernetes:helm.sh/v3:Release" && r.name === "kps-release")!;
    const rbac = recorded.filter((r) => r.type.startsWith("kubernetes:rbac.authorization.k8s.io/v1:"));
    // A Role and a binding per namespace of each namespaced grant, a ClusterRole and a binding per cluster-wide one.
    const expected = plan.rbac.reduce((n, g) => n + 2 * (g.scope === "cluster" ? 1 : g.namespaces.length), 0);
    expect(rbac).toHaveLength(expected);
    for (const r of rbac)
      expect(
        release.dependencies.some((d) => d.endsWith(`::${r.name}`)),
        r.name,
      ).toBe(true);
  });
});
