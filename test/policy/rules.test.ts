import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { allViolations, openToInternet, RULES, STACK_RULE_NAME, type PolicyInput } from "../../policy/rules";
import { resourcePolicies, stackPolicy } from "../../policy/pack";
import { dotted } from "../../core/config/address-set";
import { AWS_BAD_CASES, AWS_GOOD_CASES } from "./cases/aws";
import { renderedProd } from "./cases/fixtures";
import { IAM_BAD_CASES, IAM_GOOD_CASES } from "./cases/iam";
import { PSS_BAD_CASES, PSS_GOOD_CASES } from "./cases/pss";
import { RAY_BAD_CASES, RAY_GOOD_CASES } from "./cases/ray";
import { SECRET_BAD_CASES, SECRET_GOOD_CASES } from "./cases/secrets";

const BAD = [...RAY_BAD_CASES, ...PSS_BAD_CASES, ...SECRET_BAD_CASES, ...IAM_BAD_CASES, ...AWS_BAD_CASES];
const GOOD = [...RAY_GOOD_CASES, ...PSS_GOOD_CASES, ...SECRET_GOOD_CASES, ...IAM_GOOD_CASES, ...AWS_GOOD_CASES];

/** The variants issue 35 tried that the pack used to miss, each by a phrase of a bad case's name. */
const ISSUE_VARIANTS = [
  "init container may escalate",
  "capability added",
  "hostNetwork",
  "hostPath volume",
  "s3:Get* on Resource *",
  "NotAction with Allow",
  "single-object Statement",
  "inline role policy",
  "AdministratorAccess attachment",
  "alias/aws/s3 as the key",
  "BucketV2 not protected",
  "BucketV2's inline encryption",
  "RayCluster without token auth",
  "RayService without token auth",
  "EKS endpoint public, no ranges",
  "image :latest",
  "image without a tag",
];

/** The classes issue 47 found the pack missing, each by a phrase of a bad case's name. */
const ISSUE_47_CLASSES = [
  "Statement given twice",
  "Effect given twice",
  "iam:PassRole on Resource *",
  "sts:AssumeRoleWithWebIdentity on every role",
  "kms:Decrypt on every key",
  "RayJob at ray.io/v1alpha1",
  "procMount Unmasked",
  "unsafe sysctl",
  "AppArmor annotation unconfined",
  "SELinux type spc_t",
  "nfs volume",
  "Windows hostProcess",
  "pod seccomp Unconfined",
  "NET_BIND_SERVICE added",
  "shareProcessNamespace",
  "RayJob runtimeEnvYAML env_vars with a secret",
  "RayJob entrypoint with a token flag",
  "envFrom a ConfigMap named as a secret",
];

describe("policy pack", () => {
  it("passes everything the prod stack renders (RayJobs, NetworkPolicies, …), the stack rule included", () => {
    const objects = renderedProd();
    expect(objects.filter((o) => o.type === "kubernetes:ray.io/v1:RayJob").length).toBeGreaterThan(0);
    expect(allViolations(objects)).toEqual([]);
  });

  it("has, for every rule, a good input it passes and a bad one it catches", () => {
    for (const r of RULES) {
      expect(
        GOOD.some((g) => g.rules.includes(r.name)),
        `${r.name} has a good case`,
      ).toBe(true);
      expect(
        BAD.some((b) => b.rule === r.name),
        `${r.name} has a bad case`,
      ).toBe(true);
    }
    for (const v of [...ISSUE_VARIANTS, ...ISSUE_47_CLASSES])
      expect(BAD.map((b) => b.variant).join("\n"), v).toContain(v);
    expect(new Set(RULES.map((r) => r.name)).size).toBe(RULES.length);
  });

  it("judges an endpoint's ranges as address sets: every split of 0.0.0.0/0 is open, a /16 is not", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8 }), (bits) => {
        const size = 2 ** (32 - bits);
        const blocks = Array.from({ length: 2 ** bits }, (_, i) => `${dotted(i * size)}/${bits}`);
        expect(openToInternet(blocks)).toBeDefined();
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 16 - 1 }), (n) => {
        expect(openToInternet([`${dotted(n * 2 ** 16)}/16`])).toBeUndefined();
      }),
    );
  });

  it("reports every violation with its rule's name", () => {
    const bad: PolicyInput = { type: "aws:s3/bucketV2:BucketV2", name: "b", props: { forceDestroy: true } };
    expect(allViolations([bad])).toEqual([
      "bucket-protected: BucketV2 b: protect is not set: pulumi destroy deletes it; set protect: true",
      "bucket-protected: BucketV2 b: forceDestroy is true: pulumi destroy empties it; set forceDestroy: false",
      "bucket-encryption-present: BucketV2 b: default encryption is not configured (no inline configuration, and no " +
        "BucketServerSideEncryptionConfiguration names this BucketV2), so S3 encrypts with SSE-S3 (AES256), not a key " +
        "of the stack's; add an aws.s3.BucketServerSideEncryptionConfiguration with bucket: <bucket>.id, sseAlgorithm " +
        "aws:kms and kmsMasterKeyId the stack's KMS key",
    ]);
  });

  it("is wrapped for @pulumi/policy: every rule, mandatory, reporting through its validate callbacks", async () => {
    expect(resourcePolicies().map((p) => p.name)).toEqual(RULES.map((r) => r.name));
    expect(new Set([...resourcePolicies(), stackPolicy()].map((p) => p.enforcementLevel))).toEqual(
      new Set(["mandatory"]),
    );
    const reported: string[] = [];
    const report = (m: string) => reported.push(m);
    const lt = resourcePolicies().find((p) => p.name === "imdsv2-hop-limit-1")!;
    const args = {
      type: "aws:ec2/launchTemplate:LaunchTemplate",
      name: "lt",
      props: { metadataOptions: {} },
      opts: { protect: false },
    };
    await (lt.validateResource as (a: unknown, r: typeof report) => void)(args, report);
    await (stackPolicy().validateStack as (a: unknown, r: typeof report) => void)(
      { resources: [{ type: "kubernetes:ray.io/v1:RayCluster", name: "c", props: {}, opts: {} }] },
      report,
    );
    expect(stackPolicy().name).toBe(STACK_RULE_NAME);
    expect(reported).toEqual([
      "LaunchTemplate lt: metadataOptions is httpTokens not set, httpPutResponseHopLimit not set; set httpTokens " +
        '"required" and httpPutResponseHopLimit 1',
      "namespace default runs Ray pods (RayCluster c) without a default-deny NetworkPolicy; add one with " +
        "spec.podSelector: {}, spec.policyTypes: [Ingress, Egress] and no ingress or egress rules",
    ]);
  });
});
