/**
 * The deployed defaults, on the resources the prod program registers (its cluster looked up as AWS would answer):
 * Grafana's admin password is the platform's own (a random value in a Secret the chart is pointed at; no chart-made or
 * default password), Grafana's sidecars read the monitoring namespace only, the monitoring namespace lets in only its
 * own pods and the operator's webhook, and every Pod Identity role of storage and observability trusts one service
 * account of this cluster, in this account.
 */
import { describe, expect, it } from "vitest";
import { RAY_SERVICE_ACCOUNT } from "../../core/platform/storage";
import { repoStack } from "../helpers/fixtures";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { clusterLookups, podIdentityConditions, scopedTo } from "./cluster-lookups";
import { ofType, runProgram } from "./run-program";

/** Every value held under `key` anywhere in `o`. */
function valuesUnder(o: unknown, key: string): unknown[] {
  if (!o || typeof o !== "object") return [];
  return Object.entries(o).flatMap(([k, v]) => [...(k === key ? [v] : []), ...valuesUnder(v, key)]);
}

const dependsOn = (r: RecordedResource, name: string) => r.dependencies.some((d) => d.endsWith(`::${name}`));

describe("RayGpuPlatform, prod stack: deployed defaults", () => {
  let rs: RecordedResource[];
  let kps: RecordedResource;
  let grafana: Record<string, unknown>;
  it("runs the prod program", async () => {
    rs = await runProgram("prod", () => {}, clusterLookups("ray-gpu-prod"));
    kps = ofType(rs, "kubernetes:helm.sh/v3:Release").find((r) => r.inputs["chart"] === "kube-prometheus-stack")!;
    grafana = (kps.inputs["values"] as { grafana: Record<string, unknown> }).grafana;
    expect(grafana["enabled"]).toBe(true);
  });

  it("points Grafana at the platform's admin Secret (a random password) and sets no password in the values", () => {
    expect(grafana["admin"]).toEqual({
      existingSecret: "ray-gpu-grafana-admin",
      userKey: "admin-user",
      passwordKey: "admin-password",
    });
    expect(valuesUnder(kps.inputs["values"], "adminPassword")).toEqual([]);
    const secret = ofType(rs, "kubernetes:core/v1:Secret").find(
      (r) => r.name === "ray-gpu-observability-grafana-admin",
    )!;
    expect(secret.inputs["metadata"]).toMatchObject({ name: "ray-gpu-grafana-admin", namespace: "monitoring" });
    expect(dependsOn(secret, "ray-gpu-observability-grafana-password"), "the password is the random one").toBe(true);
    expect(dependsOn(kps, "ray-gpu-observability-grafana-admin"), "the release waits for the Secret").toBe(true);
  });

  it("keeps Grafana's sidecars in the monitoring namespace, with a Role there rather than a ClusterRole", () => {
    const searched = valuesUnder(kps.inputs["values"], "searchNamespace");
    expect(searched).toEqual(["monitoring"]);
    expect(grafana["rbac"]).toEqual({ namespaced: true });
  });

  it("grants kube-prometheus-stack's accounts their roles before the release, Secrets only in watched namespaces", () => {
    const roles = [...ofType(rs, "kubernetes:rbac.authorization.k8s.io/v1:Role")].filter((r) =>
      r.name.includes("prometheus"),
    );
    const where = (r: RecordedResource) => (r.inputs["metadata"] as { namespace: string }).namespace;
    const secretsIn = roles
      .filter((r) => JSON.stringify(r.inputs["rules"]).includes('"secrets"'))
      .map((r) => `${(r.inputs["metadata"] as { name: string }).name}@${where(r)}`);
    expect(secretsIn.sort()).toEqual([
      "ray-gpu-prometheus-admission@monitoring",
      "ray-gpu-prometheus-operator-namespaced@monitoring",
      "ray-gpu-prometheus-operator-namespaced@ray-jobs",
    ]);
    const clusterRoles = ofType(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole");
    expect(clusterRoles.filter((r) => JSON.stringify(r.inputs["rules"]).includes('"secrets"'))).toEqual([]);
    const bindings = [
      ...ofType(rs, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"),
      ...ofType(rs, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"),
    ].filter((r) => r.name.includes("prometheus"));
    expect(bindings).toHaveLength(roles.length + clusterRoles.filter((r) => r.name.includes("prometheus")).length);
    for (const r of [...roles, ...bindings])
      expect(dependsOn(kps, r.name), `the release waits for ${r.name}`).toBe(true);
    expect((kps.inputs["values"] as { global: unknown }).global).toEqual({ rbac: { create: false } });
  });

  it("lets into monitoring only its own pods, and the operator's webhook port from anywhere", () => {
    const policies = ofType(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy").filter(
      (r) => (r.inputs["metadata"] as { namespace: string }).namespace === "monitoring",
    );
    expect(policies.map((p) => [(p.inputs["metadata"] as { name: string }).name, p.inputs["spec"]])).toEqual([
      ["ray-gpu-monitoring-default-deny", { podSelector: {}, policyTypes: ["Ingress"] }],
      [
        "ray-gpu-monitoring-same-namespace",
        { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [{ podSelector: {} }] }] },
      ],
      [
        "ray-gpu-monitoring-operator-webhook",
        {
          podSelector: { matchLabels: { app: "kube-prometheus-stack-operator" } },
          policyTypes: ["Ingress"],
          ingress: [{ ports: [{ protocol: "TCP", port: 10250 }] }],
        },
      ],
    ]);
    for (const p of policies) expect(dependsOn(kps, p.name), `the release waits for ${p.name}`).toBe(true);
    expect(valuesUnder(kps.inputs["values"], "internalPort")).toEqual([10250]);
  });

  it("lets EKS Pod Identity hand each role to one service account of this cluster only, none unscoped", () => {
    const roles = podIdentityConditions(rs);
    expect(roles["ray-gpu-cluster-autoscaler-role"]).toEqual(
      scopedTo("ray-gpu-prod", "kube-system", "cluster-autoscaler"),
    );
    const unscoped = Object.entries(roles).filter(([, conditions]) => Object.keys(conditions).length === 0);
    expect(unscoped.map(([role]) => role)).toEqual([]);
    const jobs = repoStack("prod").workloads.map((w) => w.name);
    expect(roles["ray-gpu-storage-ray-role"]).toEqual(
      scopedTo("ray-gpu-prod", "ray-jobs", [RAY_SERVICE_ACCOUNT, ...jobs]),
    );
    expect(roles["ray-gpu-observability-ebs-csi-role"]).toEqual(
      scopedTo("ray-gpu-prod", "kube-system", "ebs-csi-controller-sa"),
    );
  });

  it("gives each job a service account of its own, bound to the bucket role, mounting no API token", () => {
    const jobs = repoStack("prod").workloads.map((w) => w.name);
    const accounts = ofType(rs, "kubernetes:core/v1:ServiceAccount").filter(
      (r) => (r.inputs["metadata"] as { namespace: string }).namespace === "ray-jobs",
    );
    expect(accounts.map((a) => (a.inputs["metadata"] as { name: string }).name).sort()).toEqual(
      [RAY_SERVICE_ACCOUNT, ...jobs].sort(),
    );
    for (const a of accounts) expect(a.inputs["automountServiceAccountToken"], a.name).toBe(false);
    const bound = ofType(rs, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
      .filter((r) => r.inputs["namespace"] === "ray-jobs")
      .map((r) => r.inputs["serviceAccount"]);
    expect(bound.sort()).toEqual([RAY_SERVICE_ACCOUNT, ...jobs].sort());
  });

  it("gives the KMS key a policy of its own: the account administers, only the Ray and control-plane roles use it", () => {
    const [keyPolicy] = ofType(rs, "aws:kms/keyPolicy:KeyPolicy");
    const doc = JSON.parse(keyPolicy!.inputs["policy"] as string) as {
      Statement: { Sid: string; Principal: { AWS: string | string[] }; Action: string | string[] }[];
    };
    const bySid = Object.fromEntries(doc.Statement.map((st) => [st.Sid, st]));
    expect(bySid["AccountAdministers"]!.Principal.AWS).toBe("arn:aws:iam::111122223333:root");
    expect(bySid["AccountAdministers"]!.Action).not.toContain("kms:Decrypt");
    expect(doc.Statement.flatMap((st) => st.Action)).not.toContain("kms:*");
    expect(bySid["RolesUseKey"]!.Principal.AWS).toHaveLength(2);
  });

  it("labels the monitoring namespace for Pod Security: enforce privileged (node-exporter), warn and audit restricted", () => {
    const ns = ofType(rs, "kubernetes:core/v1:Namespace").find(
      (r) => (r.inputs["metadata"] as { name: string }).name === "monitoring",
    )!;
    expect((ns.inputs["metadata"] as { labels: Record<string, string> }).labels).toMatchObject({
      "pod-security.kubernetes.io/enforce": "privileged",
      "pod-security.kubernetes.io/warn": "restricted",
      "pod-security.kubernetes.io/audit": "restricted",
    });
  });
});
