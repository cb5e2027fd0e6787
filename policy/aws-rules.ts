/**
 * Rules on AWS resources: IMDSv2 on launch templates; the EKS control plane's logs, Secrets encryption and public
 * endpoint; buckets (`Bucket`, the deprecated `BucketV2`, and both encryption-configuration resources) encrypted with a
 * customer-managed KMS key and protected from `pulumi destroy`. Pure.
 */
import { arr, list, obj, shown, violation, type Obj, type PolicyInput, type ResourceRule } from "./inputs";
import { openToInternet } from "./endpoint";

const EKS_CLUSTER = "aws:eks/cluster:Cluster";
const BUCKET = "aws:s3/bucket:Bucket";
const BUCKET_V2 = "aws:s3/bucketV2:BucketV2";
const SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration";
const SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2";

/** Whether a KMS key reference names an AWS managed key (`alias/aws/s3`, or that alias's ARN): not customer-managed. */
export const awsManagedKey = (keyId: string) => /(^|:)alias\/aws\//.test(keyId);

/** A bucket's default-encryption settings with their field paths. */
type SseAt = { readonly path: string; readonly sse: Obj };

/** Where each bucket type keeps its default encryption (`@pulumi/aws` 7.x shapes); empty when it has none inline. */
const SSE_DEFAULTS: Readonly<Record<string, (p: Readonly<Obj>) => SseAt[]>> = {
  [SSE]: (p) => rulesDefaults(p["rules"], "rules"),
  [SSE_V2]: (p) => rulesDefaults(p["rules"], "rules"),
  [BUCKET]: (p) => {
    const c = p["serverSideEncryptionConfiguration"];
    if (c === undefined) return [];
    const path = "serverSideEncryptionConfiguration.rule.applyServerSideEncryptionByDefault";
    return [{ path, sse: obj(obj(obj(c)["rule"])["applyServerSideEncryptionByDefault"]) }];
  },
  [BUCKET_V2]: (p) =>
    arr(p["serverSideEncryptionConfigurations"]).flatMap((c, i) =>
      arr(obj(c)["rules"]).flatMap((rule, j) =>
        arr(obj(rule)["applyServerSideEncryptionByDefaults"]).map((d, k) => ({
          path: `serverSideEncryptionConfigurations[${i}].rules[${j}].applyServerSideEncryptionByDefaults[${k}]`,
          sse: obj(d),
        })),
      ),
    ),
};

/** `rules[i].applyServerSideEncryptionByDefault` of an encryption-configuration resource (one entry even if none). */
function rulesDefaults(rules: unknown, path: string): SseAt[] {
  const all = arr(rules).map((rule, i) => ({
    path: `${path}[${i}].applyServerSideEncryptionByDefault`,
    sse: obj(obj(rule)["applyServerSideEncryptionByDefault"]),
  }));
  return all.length ? all : [{ path: `${path}[0].applyServerSideEncryptionByDefault`, sse: {} }];
}

const KMS_FIX = 'set sseAlgorithm "aws:kms" and kmsMasterKeyId to the ARN of the stack\'s own KMS key';

function bucketKmsProblems(r: PolicyInput): string[] {
  return (SSE_DEFAULTS[r.type]?.(r.props) ?? []).flatMap(({ path, sse }) => {
    const algorithm = sse["sseAlgorithm"];
    const key = sse["kmsMasterKeyId"];
    if (algorithm !== "aws:kms" && algorithm !== "aws:kms:dsse")
      return [violation(r, `${path}.sseAlgorithm`, `is ${shown(algorithm)}, not KMS`, KMS_FIX)];
    if (typeof key !== "string" || key === "")
      return [violation(r, `${path}.kmsMasterKeyId`, "is not set: S3 uses the AWS managed key aws/s3", KMS_FIX)];
    if (awsManagedKey(key))
      return [violation(r, `${path}.kmsMasterKeyId`, `${JSON.stringify(key)} is an AWS managed key`, KMS_FIX)];
    return [];
  });
}

function bucketProtectProblems(r: PolicyInput): string[] {
  return [
    ...(r.protect ? [] : [violation(r, "protect", "is not set: pulumi destroy deletes it", "set protect: true")]),
    ...(r.props["forceDestroy"] === true
      ? [violation(r, "forceDestroy", "is true: pulumi destroy empties it", "set forceDestroy: false")]
      : []),
  ];
}

/** The public endpoint (on unless `endpointPublicAccess: false`) is limited to narrow ranges. */
function endpointProblems(r: PolicyInput): string[] {
  const vpc = obj(r.props["vpcConfig"]);
  if (vpc["endpointPublicAccess"] === false) return [];
  const fix = "list your networks' CIDRs (together less than a /8), or set vpcConfig.endpointPublicAccess: false";
  const cidrs = list(vpc["publicAccessCidrs"]).map(String);
  if (!cidrs.length)
    return [
      violation(r, "vpcConfig.publicAccessCidrs", "is not set, so the public endpoint is open to 0.0.0.0/0", fix),
    ];
  const open = openToInternet(cidrs);
  return open ? [violation(r, "vpcConfig.publicAccessCidrs", open, fix)] : [];
}

const CONTROL_PLANE_LOGS = ["api", "audit", "authenticator"];

/** The rules on AWS resources other than IAM. */
export const AWS_RULES: readonly ResourceRule[] = [
  {
    name: "imdsv2-hop-limit-1",
    description: "Launch templates require IMDSv2 with a hop limit of 1, so pods cannot take the node's role.",
    types: ["aws:ec2/launchTemplate:LaunchTemplate"],
    check: (r) => {
      const m = obj(r.props["metadataOptions"]);
      return m["httpTokens"] === "required" && m["httpPutResponseHopLimit"] === 1
        ? []
        : [
            violation(
              r,
              "metadataOptions",
              `is httpTokens ${shown(m["httpTokens"])}, httpPutResponseHopLimit ${shown(m["httpPutResponseHopLimit"])}`,
              'set httpTokens "required" and httpPutResponseHopLimit 1',
            ),
          ];
    },
  },
  {
    name: "eks-audit-logging",
    description: "EKS control planes send api, audit and authenticator logs to CloudWatch.",
    types: [EKS_CLUSTER],
    check: (r) => {
      const missing = CONTROL_PLANE_LOGS.filter((t) => !arr(r.props["enabledClusterLogTypes"]).includes(t));
      return missing.length
        ? [violation(r, "enabledClusterLogTypes", `lacks ${missing.join(", ")}`, `add ${missing.join(", ")}`)]
        : [];
    },
  },
  {
    name: "eks-secrets-encryption",
    description: "EKS clusters envelope-encrypt Kubernetes Secrets with a KMS key.",
    types: [EKS_CLUSTER],
    check: (r) =>
      arr(obj(r.props["encryptionConfig"])["resources"]).includes("secrets")
        ? []
        : [
            violation(
              r,
              "encryptionConfig.resources",
              'does not hold "secrets"',
              'set encryptionConfig: {provider: {keyArn}, resources: ["secrets"]}',
            ),
          ],
  },
  {
    name: "eks-endpoint-restricted",
    description:
      "An EKS API endpoint is private, or public to ranges that together admit less than a /8 (judged as address sets).",
    types: [EKS_CLUSTER],
    check: endpointProblems,
  },
  {
    name: "bucket-kms-encryption",
    description:
      "Bucket encryption (either encryption-configuration resource, or a Bucket's or BucketV2's inline one) uses a " +
      "customer-managed KMS key: not AES256, not the AWS managed alias/aws/s3.",
    types: Object.keys(SSE_DEFAULTS),
    check: bucketKmsProblems,
  },
  {
    name: "bucket-protected",
    description: "Buckets (Bucket, BucketV2) are protected from `pulumi destroy` and never emptied by it.",
    types: [BUCKET, BUCKET_V2],
    check: bucketProtectProblems,
  },
];
