/** Good and bad AWS inputs: bucket encryption and protection, the EKS control plane, launch templates. */
import type { PolicyInput } from "../../../policy/rules";
import type { BadCase, GoodCase } from "./fixtures";

const SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration";
const SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2";
const BUCKET = "aws:s3/bucket:Bucket";
const BUCKET_V2 = "aws:s3/bucketV2:BucketV2";
const EKS = "aws:eks/cluster:Cluster";
const KEY = "arn:aws:kms:us-east-1:123456789012:key/0f2c1e4a-1111-2222-3333-444455556666";
const KMS = "bucket-kms-encryption";
const PROTECT = "bucket-protected";
const ENDPOINT = "eks-endpoint-restricted";

const byDefault = (sse: Record<string, unknown>) => ({ applyServerSideEncryptionByDefault: sse });
const kms = (kmsMasterKeyId?: string) => ({ sseAlgorithm: "aws:kms", ...(kmsMasterKeyId ? { kmsMasterKeyId } : {}) });
const input = (type: string, props: Record<string, unknown>, protect?: boolean): PolicyInput => ({
  type,
  name: "b",
  props,
  ...(protect === undefined ? {} : { protect }),
});
const DEFAULT = "rules[0].applyServerSideEncryptionByDefault";
const V2_INLINE = "serverSideEncryptionConfigurations[0].rules[0].applyServerSideEncryptionByDefaults[0]";
const v2Inline = (sse: Record<string, unknown>) => ({
  serverSideEncryptionConfigurations: [{ rules: [{ applyServerSideEncryptionByDefaults: [sse] }] }],
});

const bad = (variant: string, rule: string, i: PolicyInput, path: string): BadCase => ({
  variant,
  rule,
  input: i,
  path,
});
const cidrs = (publicAccessCidrs: unknown, endpointPublicAccess: unknown = true) =>
  input(EKS, { vpcConfig: { endpointPublicAccess, publicAccessCidrs } });
const CIDRS = "vpcConfig.publicAccessCidrs";

export const AWS_BAD_CASES: readonly BadCase[] = [
  bad(
    "alias/aws/s3 as the key",
    KMS,
    input(SSE, { rules: [byDefault(kms("alias/aws/s3"))] }),
    `${DEFAULT}.kmsMasterKeyId`,
  ),
  bad(
    "the ARN of alias/aws/s3",
    KMS,
    input(SSE, { rules: [byDefault(kms("arn:aws:kms:us-east-1:123456789012:alias/aws/s3"))] }),
    `${DEFAULT}.kmsMasterKeyId`,
  ),
  bad("aws:kms without a key", KMS, input(SSE, { rules: [byDefault(kms())] }), `${DEFAULT}.kmsMasterKeyId`),
  bad("AES256", KMS, input(SSE, { rules: [byDefault({ sseAlgorithm: "AES256" })] }), `${DEFAULT}.sseAlgorithm`),
  bad("no rule", KMS, input(SSE, { rules: [] }), `${DEFAULT}.sseAlgorithm`),
  bad(
    "V2 configuration, AES256",
    KMS,
    input(SSE_V2, { rules: [byDefault({ sseAlgorithm: "AES256" })] }),
    `${DEFAULT}.sseAlgorithm`,
  ),
  bad(
    "Bucket's inline encryption, alias/aws/s3",
    KMS,
    input(BUCKET, { serverSideEncryptionConfiguration: { rule: byDefault(kms("alias/aws/s3")) } }, true),
    "serverSideEncryptionConfiguration.rule.applyServerSideEncryptionByDefault.kmsMasterKeyId",
  ),
  bad(
    "BucketV2's inline encryption, AES256",
    KMS,
    input(BUCKET_V2, v2Inline({ sseAlgorithm: "AES256" }), true),
    `${V2_INLINE}.sseAlgorithm`,
  ),
  bad("BucketV2 not protected", PROTECT, input(BUCKET_V2, {}, false), "protect"),
  bad("BucketV2 forceDestroy", PROTECT, input(BUCKET_V2, { forceDestroy: true }, true), "forceDestroy"),
  bad("Bucket not protected", PROTECT, input(BUCKET, { forceDestroy: false }), "protect"),
  bad("EKS endpoint public, no ranges", ENDPOINT, cidrs(undefined), CIDRS),
  bad("EKS endpoint public by default, 0.0.0.0/0", ENDPOINT, cidrs(["0.0.0.0/0"], undefined), CIDRS),
  bad("EKS endpoint open as two halves", ENDPOINT, cidrs(["0.0.0.0/1", "128.0.0.0/1"]), CIDRS),
  bad(
    "EKS endpoint open as four /2 blocks",
    ENDPOINT,
    cidrs(["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"]),
    CIDRS,
  ),
  bad("EKS endpoint open to a /7", ENDPOINT, cidrs(["203.0.113.0/24", "44.0.0.0/7"]), CIDRS),
  bad("EKS endpoint open to ::/0", ENDPOINT, cidrs(["203.0.113.0/24", "::/0"]), CIDRS),
  bad("EKS endpoint open as two IPv6 halves", ENDPOINT, cidrs(["::/1", "8000::/1"]), CIDRS),
  bad("EKS endpoint range malformed", ENDPOINT, cidrs(["203.0.113.0/024"]), CIDRS),
  bad(
    "EKS logs missing",
    "eks-audit-logging",
    input(EKS, { enabledClusterLogTypes: ["api"] }),
    "enabledClusterLogTypes",
  ),
  bad("EKS Secrets not encrypted", "eks-secrets-encryption", input(EKS, {}), "encryptionConfig.resources"),
  bad(
    "IMDS hop limit 2",
    "imdsv2-hop-limit-1",
    input("aws:ec2/launchTemplate:LaunchTemplate", {
      metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 },
    }),
    "metadataOptions",
  ),
];

export const AWS_GOOD_CASES: readonly GoodCase[] = [
  { name: "SSE-KMS with the stack's key", rules: [KMS], input: input(SSE, { rules: [byDefault(kms(KEY))] }) },
  {
    name: "V2 configuration, DSSE-KMS",
    rules: [KMS],
    input: input(SSE_V2, { rules: [byDefault({ sseAlgorithm: "aws:kms:dsse", kmsMasterKeyId: KEY })] }),
  },
  {
    name: "a key alias of the customer's",
    rules: [KMS],
    input: input(SSE, { rules: [byDefault(kms("alias/acme-ml"))] }),
  },
  {
    name: "protected Bucket, encrypted by a separate resource",
    rules: [KMS, PROTECT],
    input: input(BUCKET, { forceDestroy: false }, true),
  },
  {
    name: "protected BucketV2 with inline SSE-KMS",
    rules: [KMS, PROTECT],
    input: input(BUCKET_V2, v2Inline({ sseAlgorithm: "aws:kms", kmsMasterKeyId: KEY }), true),
  },
  {
    name: "EKS: logs, Secrets encryption, endpoint for two networks (IPv4 and IPv6)",
    rules: ["eks-audit-logging", "eks-secrets-encryption", ENDPOINT],
    input: input(EKS, {
      enabledClusterLogTypes: ["api", "audit", "authenticator"],
      encryptionConfig: { provider: { keyArn: KEY }, resources: ["secrets"] },
      vpcConfig: { endpointPublicAccess: true, publicAccessCidrs: ["203.0.113.0/24", "2001:db8::/32"] },
    }),
  },
  { name: "EKS private endpoint (ranges ignored)", rules: [ENDPOINT], input: cidrs(["0.0.0.0/0"], false) },
  {
    name: "IMDSv2, one hop",
    rules: ["imdsv2-hop-limit-1"],
    input: input("aws:ec2/launchTemplate:LaunchTemplate", {
      metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 1 },
    }),
  },
];
