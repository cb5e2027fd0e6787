import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../helpers/fixtures";
import { redact } from "../../../cli/preview/run";
import { waitsFor, type DeployNode } from "../../../core/deploy/order";
import { CLUSTER_AUTOSCALER_IMAGES } from "../../../core/platform/addons";
import { PREVIEW_COLUMNS, shortType } from "../../../cli/preview/text";
import { runCli } from "../../helpers/run-cli";

interface Doc {
  resources: DeployNode[];
}

/** The real binary, with no AWS credentials in reach. */
const preview = (...args: string[]) =>
  runCli(["preview", ...args], { AWS_ACCESS_KEY_ID: "", AWS_SECRET_ACCESS_KEY: "", AWS_PROFILE: "" });

describe("ray-gpu preview (offline)", () => {
  it.each(["dev", "prod"])(
    "lists the whole %s platform as JSON, with placeholders for cloud-only values, and no example job",
    async (stack) => {
      const r = await preview("--stack", stack, "--json");
      expect(r.status, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as Doc;
      // The resources, and what the plan says of the API endpoint and of what pulumi destroy leaves.
      expect(Object.keys(doc)).toEqual(["deploy", "resources"]);
      const deploy = (doc as unknown as { deploy: { apiEndpoint: string; destroy: { what: string }[] } }).deploy;
      expect(deploy.apiEndpoint).toMatch(stack === "prod" ? /^private only/ : /^public, from 0\.0\.0\.0\/0/);
      expect(deploy.destroy.map((d) => d.what.split(" ")[0])).toEqual(
        stack === "prod" ? ["Prometheus's", "network", "the"] : ["Prometheus's", "network"],
      );
      for (const res of doc.resources) {
        const keys = ["dependsOn", "inputs", "name", "parent", ...("protection" in res ? ["protection"] : []), "type"];
        expect(Object.keys(res).sort()).toEqual(keys);
      }
      const protectedNames = doc.resources.filter((r) => "protection" in r).map((r) => r.type);
      // prod keeps its data: the bucket and the KMS key are protected and retained; dev protects nothing
      expect(protectedNames.sort()).toEqual(stack === "prod" ? ["aws:kms/key:Key", "aws:s3/bucket:Bucket"] : []);
      const types = new Set(doc.resources.map((x) => x.type));
      for (const t of [
        "awsx:ec2:Vpc",
        "aws:eks/cluster:Cluster",
        "aws:eks/nodeGroup:NodeGroup",
        "kubernetes:helm.sh/v3:Release",
        "aws:s3/bucket:Bucket",
        "aws:eks/podIdentityAssociation:PodIdentityAssociation",
        "ray-gpu:index:RayGpuPlatform",
      ]) {
        expect(types.has(t), t).toBe(true);
      }
      // The example stacks' workloads are marked `example: true`: pulumi up submits none of them.
      expect(types.has("kubernetes:ray.io/v1:RayJob")).toBe(false);
      expect(r.stdout).toContain("<computed: ");
      expect(doc.resources.find((x) => x.type === "aws:eks/nodeGroup:NodeGroup")!.parent).not.toBeNull();
      // The order pulumi up creates things in: no node group waits for CoreDNS, CoreDNS waits for the CPU node group.
      const waits = waitsFor(doc.resources);
      const coredns = doc.resources.find((x) => x.inputs["addonName"] === "coredns")!;
      const groups = doc.resources.filter((x) => x.type === "aws:eks/nodeGroup:NodeGroup");
      for (const g of groups) expect(waits.get(g.name)!.has(coredns.name), g.name).toBe(false);
      expect(coredns.dependsOn).toContain("ray-gpu-system-ng");
      // The autoscaler runs the release of the cluster's Kubernetes minor.
      const cluster = doc.resources.find((x) => x.type === "aws:eks/cluster:Cluster")!;
      const ca = doc.resources.find((x) => x.name === "ray-gpu-cluster-autoscaler-release")!;
      const tag = (ca.inputs["values"] as { image: { tag: string } }).image.tag;
      expect(tag).toBe(CLUSTER_AUTOSCALER_IMAGES[cluster.inputs["version"] as keyof typeof CLUSTER_AUTOSCALER_IMAGES]);
      expect(tag.replace(/^v(\d+\.\d+)\..*$/, "$1")).toBe(cluster.inputs["version"]);
      // Byte-stable: a second run prints the same document (checked once, on dev, to keep the suite fast).
      if (stack === "dev") expect((await preview("--stack", stack, "--json")).stdout).toBe(r.stdout);
    },
  );

  it("prints a tree that fits 120 columns without --json, everything with --wide, and reports bad config like plan does", async () => {
    const r = await preview("--stack", "prod");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Preview of stack prod: \d+ resources/);
    const lines = r.stdout.split("\n");
    expect(lines.filter((l) => [...l].length > PREVIEW_COLUMNS)).toEqual([]);
    expect(r.stdout).toMatch(
      /\n├─ ray-gpu:index:Storage +ray-gpu-storage\n│ {2}├─ aws:eks:PodIdentityAssociation +ray-gpu-storage-identity\n/,
    );
    expect(r.stdout).toMatch(/│ {2}├─ aws:s3:Bucket +ray-gpu-storage-bucket \(protect, retainOnDelete\)\n/);
    const wide = await preview("--stack", "prod", "--wide");
    expect(wide.stdout).toMatch(
      new RegExp(
        "\naws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration " +
          "+ray-gpu-storage-encryption +ray-gpu-storage\n",
      ),
    );
    // the same resources either way, and nothing on stderr when it is not a terminal
    const count = (text: string) => /: (\d+) resources/.exec(text)![1];
    expect(count(wide.stdout)).toBe(count(r.stdout));
    expect(r.stderr).toBe("");
    const bad = await preview("--stack", "staging");
    expect(bad.status).toBe(2);
  });

  it("refuses prod with its CPU pool at one m6i.2xlarge (exit 1), naming the head no node can take", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ray-gpu-small-pool-"));
    cpSync(join(repoRoot, "Pulumi.yaml"), join(dir, "Pulumi.yaml"));
    const prod = readFileSync(join(repoRoot, "Pulumi.prod.yaml"), "utf8");
    const small = prod.replace(
      /(instanceType: m6i\.2xlarge\n\s+)minNodes: 2\n(\s+)maxNodes: 6/,
      "$1minNodes: 1\n$2maxNodes: 1",
    );
    expect(small).not.toBe(prod);
    writeFileSync(join(dir, "Pulumi.prod.yaml"), small);
    const r = await preview("--stack", "prod", "-C", dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/✖ ray-gpu:workloads\[1\]: pod embed-chunks\/head can never be scheduled/);
    expect(r.stdout).toBe("");
  });

  it("shortens a type token as pulumi preview does, only where the module repeats the name", () => {
    expect(shortType("aws:eks/nodeGroup:NodeGroup")).toBe("aws:eks:NodeGroup");
    expect(shortType("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")).toBe(
      "aws:s3:BucketServerSideEncryptionConfiguration",
    );
    expect(shortType("kubernetes:ray.io/v1:RayJob")).toBe("kubernetes:ray.io/v1:RayJob");
    expect(shortType("ray-gpu:index:Storage")).toBe("ray-gpu:index:Storage");
  });

  it("redacts secrets", () => {
    expect(redact({ kubeconfig: "x", nested: { password: "p", ok: 1 }, list: [{ token: "t" }] })).toEqual({
      kubeconfig: "[redacted]",
      nested: { password: "[redacted]", ok: 1 },
      list: [{ token: "[redacted]" }],
    });
    expect(
      redact({ value: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: "s3cr3t" } }),
    ).toEqual({ value: "[secret]" });
  });
});
