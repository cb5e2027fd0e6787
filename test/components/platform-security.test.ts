import { describe, expect, it } from "vitest";
import { redact } from "../../cli/preview/run";
import { allViolations } from "../../policy/rules";
import type { RecordedResource } from "../helpers/pulumi-mocks";
import { stackInputs } from "../policy/cases/fixtures";
import { ofType, runProgram } from "./run-program";

// A Pulumi secret config value planted in the prod stack, shaped like a Hugging Face token; valid for nothing.
const CANARY = "hf_PlantedCanaryValue0123456789abcdef";

describe("RayGpuPlatform, prod stack: secure by default", () => {
  let rs: RecordedResource[];
  it("runs the prod program with a workload secret from Pulumi secret config", async () => {
    rs = await runProgram("prod", (config) => {
      const workloads = JSON.parse(config["ray-gpu:workloads"]!) as Record<string, unknown>[];
      workloads[0]!["secretEnv"] = { HF_TOKEN: { pulumiConfig: "hfToken" } };
      config["ray-gpu:workloads"] = JSON.stringify(workloads);
      config["ray-gpu-secrets:hfToken"] = CANARY;
    });
    expect(rs.length).toBeGreaterThan(0);
  });

  it("keeps the secret's value in a Kubernetes Secret only, marked secret, and out of every preview", () => {
    const holding = rs.filter((r) => JSON.stringify(r.inputs).includes(CANARY));
    expect(holding.map((r) => `${r.type} ${r.name}`)).toEqual(["kubernetes:core/v1:Secret llm-pretrain-secrets"]);
    expect(JSON.stringify(redact(holding[0]!.inputs))).not.toContain(CANARY);
    expect(JSON.stringify(rs.map((r) => redact(r.inputs)))).not.toContain(CANARY);
    const job = ofType(rs, "kubernetes:ray.io/v1:RayJob").find((r) => r.name === "llm-pretrain-rayjob")!;
    expect(JSON.stringify(job.inputs)).toContain('"secretKeyRef":{"key":"HF_TOKEN","name":"llm-pretrain-secrets"}');
  });

  it("protects the bucket and the KMS key from destroy and keeps them if removed; rotates the key", () => {
    const bucket = ofType(rs, "aws:s3/bucket:Bucket")[0]!;
    const key = ofType(rs, "aws:kms/key:Key")[0]!;
    for (const r of [bucket, key]) expect([r.name, r.protect, r.retainOnDelete]).toEqual([r.name, true, true]);
    expect(bucket.inputs["forceDestroy"]).toBe(false);
    expect(key.inputs).toMatchObject({ enableKeyRotation: true, deletionWindowInDays: 30 });
    const sse = ofType(
      rs,
      "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    )[0]!;
    expect(JSON.stringify(sse.inputs)).toContain('"sseAlgorithm":"aws:kms"');
    expect(JSON.stringify(sse.inputs)).toContain("kmsMasterKeyId");
  });

  it("logs and encrypts the control plane, narrows its endpoint, and upgrades within standard support", () => {
    const eks = ofType(rs, "aws:eks/cluster:Cluster")[0]!.inputs;
    expect(eks["enabledClusterLogTypes"]).toEqual(["api", "audit", "authenticator"]);
    expect(eks["encryptionConfig"]).toMatchObject({ resources: ["secrets"] });
    expect(eks["upgradePolicy"]).toEqual({ supportType: "STANDARD" });
    expect(eks["version"]).toBe("1.36");
    // Prod ships with a private endpoint (Pulumi.prod.yaml): no public access, so no public ranges either.
    expect(eks["vpcConfig"]).toMatchObject({ endpointPublicAccess: false, endpointPrivateAccess: true });
    expect(eks["vpcConfig"]).not.toHaveProperty("publicAccessCidrs");
    const cni = ofType(rs, "aws:eks/addon:Addon").find((a) => a.inputs["addonName"] === "vpc-cni")!;
    expect(JSON.parse(cni.inputs["configurationValues"] as string)).toEqual({ enableNetworkPolicy: "true" });
  });

  it("keeps pods off the node's role: IMDSv2 with one hop on every node", () => {
    const templates = ofType(rs, "aws:ec2/launchTemplate:LaunchTemplate");
    expect(templates.length).toBeGreaterThan(0);
    for (const t of templates)
      expect(t.inputs["metadataOptions"]).toMatchObject({ httpTokens: "required", httpPutResponseHopLimit: 1 });
  });

  it("isolates the workload namespace: PSA labels, default-deny NetworkPolicies, no token shared by its jobs", () => {
    const ns = ofType(rs, "kubernetes:core/v1:Namespace")[0]!;
    expect((ns.inputs["metadata"] as { labels: object }).labels).toEqual({
      "pod-security.kubernetes.io/audit": "restricted",
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/warn": "restricted",
    });
    const policies = ofType(rs, "kubernetes:networking.k8s.io/v1:NetworkPolicy").map((r) => r.name);
    expect(policies).toContain("ray-gpu-security-ray-gpu-default-deny");
    // Each job's Ray token is KubeRay's, one per RayCluster: the platform makes none for the namespace (the only random
    // value is Grafana's admin password: platform-deployed-defaults.test.ts).
    expect(ofType(rs, "random:index/randomPassword:RandomPassword").map((r) => r.name)).toEqual([
      "ray-gpu-observability-grafana-password",
    ]);
    for (const job of ofType(rs, "kubernetes:ray.io/v1:RayJob"))
      expect((job.inputs["spec"] as { rayClusterSpec: { authOptions: object } }).rayClusterSpec.authOptions).toEqual({
        mode: "token",
      });
  });

  it("passes the policy pack: no violation in anything the prod stack would create", () => {
    const resources = stackInputs(rs);
    expect(resources.filter((r) => r.type === "kubernetes:ray.io/v1:RayJob").length).toBeGreaterThan(0);
    expect(allViolations(resources)).toEqual([]);
  });
});
