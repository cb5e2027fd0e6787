/**
 * What must hold for every stack, asserted on the resources the real program registers under mocks: intent,
 * not mere existence.
 */
import { OBSERVABILITY_CHARTS } from "../../core/observability/charts";
import { KUEUE_CHART } from "../../core/platform/queueing";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { expect } from "vitest";
import { parse } from "yaml";
import { CHART_PINS } from "../../core/platform/addons";
import { repoRoot } from "../helpers/fixtures";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { ofType } from "./run-program";

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource?: string | string[];
  Condition?: Record<string, Record<string, unknown>>;
}
const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** GPU node groups: the NVIDIA AMI, the GPU taint, and the autoscaler's node-template tags; returned for the jobs. */
function assertGpuNodeGroups(rs: readonly RecordedResource[]): RecordedResource[] {
  const groups = ofType(rs, "aws:eks/nodeGroup:NodeGroup");
  const gpuGroups = groups.filter((g) => (g.inputs["labels"] as Record<string, string>)["ray-gpu.io/role"] === "gpu");
  expect(gpuGroups.length).toBeGreaterThan(0);
  for (const g of gpuGroups) {
    expect(g.inputs["amiType"]).toBe("AL2023_x86_64_NVIDIA");
    expect(g.inputs["taints"]).toEqual([{ key: "nvidia.com/gpu", value: "true", effect: "NO_SCHEDULE" }]);
    const tags = g.inputs["tags"] as Record<string, string>;
    expect(Number(tags["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"])).toBeGreaterThan(0);
    expect(tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"]).toBe("true:NoSchedule");
  }
  return gpuGroups;
}

/** Every worker group of every RayJob tolerates the GPU taint and selects a GPU node group; RayJobs wait for KubeRay. */
function assertRayJobsPlaceable(rs: readonly RecordedResource[], gpuGroups: readonly RecordedResource[]): void {
  // Every worker group of every RayJob tolerates the taint and selects labels some GPU node group carries.
  for (const job of ofType(rs, "kubernetes:ray.io/v1:RayJob")) {
    const spec = job.inputs["spec"] as {
      rayClusterSpec: {
        workerGroupSpecs: {
          template: { spec: { nodeSelector: Record<string, string>; tolerations: Record<string, string>[] } };
        }[];
      };
    };
    for (const wg of spec.rayClusterSpec.workerGroupSpecs) {
      const pod = wg.template.spec;
      const carrier = gpuGroups.find((g) =>
        Object.entries(pod.nodeSelector).every(([k, v]) => (g.inputs["labels"] as Record<string, string>)[k] === v),
      );
      expect(carrier, `${job.name} selects ${JSON.stringify(pod.nodeSelector)}`).toBeDefined();
      expect(pod.tolerations).toContainEqual({
        key: "nvidia.com/gpu",
        operator: "Equal",
        value: "true",
        effect: "NoSchedule",
      });
    }
    // RayJobs wait for the KubeRay operator (its CRDs).
    expect(
      job.dependencies.some((d) => d.endsWith("::ray-gpu-kuberay-release")),
      `${job.name} depends on the KubeRay operator`,
    ).toBe(true);
  }
}

/** Every Kubernetes object goes to the platform's cluster, every AWS resource through the stack's provider. */
function assertExplicitProviders(rs: readonly RecordedResource[]): void {
  // Every Kubernetes object goes to the platform's cluster through its provider, every AWS resource through the
  // stack's explicit provider: no default provider anywhere.
  for (const r of rs.filter((x) => x.type.startsWith("kubernetes:"))) {
    expect(r.provider, `${r.type} ${r.name}`).toMatch(/pulumi:providers:kubernetes::ray-gpu-cluster-k8s::/);
  }
  for (const r of rs.filter((x) => x.type.startsWith("aws:"))) {
    expect(r.provider, `${r.type} ${r.name}`).toMatch(/pulumi:providers:aws::aws::/);
  }
}

/** Objects in the workload namespace wait for it: a first pulumi up cannot race the namespace. */
function assertNamespaceWaits(rs: readonly RecordedResource[]): void {
  // Objects in the workload namespace wait for it: a first pulumi up cannot race the namespace.
  const namespace = ofType(rs, "kubernetes:core/v1:Namespace")[0]!;
  for (const r of rs.filter(
    (x) =>
      (x.inputs["metadata"] as { namespace?: string } | undefined)?.namespace ===
      (namespace.inputs["metadata"] as { name: string }).name,
  )) {
    expect(
      r.dependencies.some((d) => d.endsWith(`::${namespace.name}`)),
      `${r.type} ${r.name} waits for the namespace`,
    ).toBe(true);
  }
}

/** IMDSv2 on every node; the bucket encrypted, versioned, public access blocked, TLS only. */
function assertNodesAndBucket(rs: readonly RecordedResource[]): void {
  // IMDSv2 on every node.
  for (const lt of ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate")) {
    expect((lt.inputs["metadataOptions"] as Record<string, unknown>)["httpTokens"]).toBe("required");
  }

  // The bucket: encrypted, public access blocked, TLS only.
  const sse = ofType(rs, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")[0]!;
  expect(
    (sse.inputs["rules"] as { applyServerSideEncryptionByDefault: { sseAlgorithm: string } }[])[0]!
      .applyServerSideEncryptionByDefault.sseAlgorithm,
  ).toBe("aws:kms");
  expect(ofType(rs, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")[0]!.inputs).toMatchObject({
    blockPublicAcls: true,
    blockPublicPolicy: true,
    ignorePublicAcls: true,
    restrictPublicBuckets: true,
  });
  const bucketPolicy = JSON.parse(String(ofType(rs, "aws:s3/bucketPolicy:BucketPolicy")[0]!.inputs["policy"])) as {
    Statement: Statement[];
  };
  expect(bucketPolicy.Statement).toContainEqual(
    expect.objectContaining({ Effect: "Deny", Condition: { Bool: { "aws:SecureTransport": "false" } } }),
  );
  expect(ofType(rs, "aws:s3/bucketVersioning:BucketVersioning")[0]!.inputs["versioningConfiguration"]).toEqual({
    status: "Enabled",
  });
}

/** No IAM policy grants * actions, or S3 actions on * resources. */
function assertNoWildcardIam(rs: readonly RecordedResource[]): void {
  // No IAM policy grants * actions, or S3 actions on * resources.
  for (const p of ofType(rs, "aws:iam/rolePolicy:RolePolicy")) {
    for (const s of (JSON.parse(String(p.inputs["policy"])) as { Statement: Statement[] }).Statement.filter(
      (x) => x.Effect === "Allow",
    )) {
      const actions = list(s.Action);
      expect(
        actions.filter((a) => a === "*" || a === "s3:*"),
        p.name,
      ).toEqual([]);
      if (actions.some((a) => a.startsWith("s3:")))
        expect(
          list(s.Resource).filter((r) => r === "*" || r.startsWith("arn:aws:s3:::*")),
          p.name,
        ).toEqual([]);
    }
  }
}

/** Charts are pinned to the versions we test; KubeRay's values use keys its chart has. */
function assertChartsPinned(rs: readonly RecordedResource[]): void {
  // Charts are pinned to the versions we test; KubeRay's values use keys its chart has.
  const releases = ofType(rs, "kubernetes:helm.sh/v3:Release");
  // The Kueue chart comes from an OCI registry, named in the chart reference itself.
  const queued = releases.some((r) => String(r.inputs["chart"]).startsWith(KUEUE_CHART.repo));
  const observed = releases.some((r) => r.inputs["chart"] === OBSERVABILITY_CHARTS.kubePrometheusStack.chart);
  // The EFA device plugin comes with an EFA pool, whose node groups carry its label.
  const efa = ofType(rs, "aws:eks/nodeGroup:NodeGroup").some(
    (g) => (g.inputs["labels"] as Record<string, string> | undefined)?.["ray-gpu.io/efa"] === "true",
  );
  expect(releases.map((r) => `${r.inputs["chart"]}@${r.inputs["version"]}`).sort()).toEqual(
    [
      ...Object.values(CHART_PINS)
        .filter((c) => c !== CHART_PINS.efaDevicePlugin || efa)
        .map((c) => `${c.chart}@${c.version}`),
      ...(queued ? [`${KUEUE_CHART.repo}/${KUEUE_CHART.chart}@${KUEUE_CHART.version}`] : []),
      ...(observed ? Object.values(OBSERVABILITY_CHARTS).map((c) => `${c.chart}@${c.version}`) : []),
    ].sort(),
  );
  const chartDir = resolve(repoRoot, "../shared/kuberay/v1.7.0/helm-kuberay-operator");
  if (existsSync(chartDir)) {
    const chart = parse(readFileSync(resolve(chartDir, "Chart.yaml"), "utf8")) as { version: string };
    const text = readFileSync(resolve(chartDir, "values.yaml"), "utf8");
    const values = parse(text) as Record<string, unknown>;
    // A key the chart documents only as a comment (`# watchNamespace:`, its templates read it) counts as the chart's.
    const commented = [...text.matchAll(/^# ([a-z][A-Za-z]*):/gm)].map((m) => m[1]);
    const kuberay = releases.find((r) => r.inputs["chart"] === "kuberay-operator")!;
    expect(kuberay.inputs["version"]).toBe(chart.version);
    for (const key of Object.keys(kuberay.inputs["values"] as object))
      expect([...Object.keys(values), ...commented], key).toContain(key);
    // Prod RayJobs use deletionRules: the operator's RayJobDeletionPolicy gate must be on by default.
    expect(values["featureGates"]).toContainEqual({ name: "RayJobDeletionPolicy", enabled: true });
  }
}

/** Every invariant, on the resources one stack's program registered. */
export function assertPlatformInvariants(rs: readonly RecordedResource[]): void {
  const gpuGroups = assertGpuNodeGroups(rs);
  assertRayJobsPlaceable(rs, gpuGroups);
  assertExplicitProviders(rs);
  assertNamespaceWaits(rs);
  assertNodesAndBucket(rs);
  assertNoWildcardIam(rs);
  assertChartsPinned(rs);
}
