/**
 * Schemas for names and addresses AWS and Kubernetes would refuse only after `pulumi up` had started (or, worse,
 * accept): regions, EKS versions, IPv4 CIDRs, S3 bucket names and Kubernetes namespaces. Each message names the rule
 * and, where one exists, the fix.
 */
import { z } from "zod";
import { AWS_REGIONS, SUPPORTED_PARTITION, SUPPORTED_REGIONS } from "../catalog/aws-regions";
import { EKS_VERSIONS, eksSupport, STANDARD_EKS_VERSIONS } from "../catalog/eks-versions";
import { suggest } from "./zod-issues";
import { dotted, ipv4, prefixLength, unusableForVpc } from "./address-set";
import { RESERVED_NAMESPACES } from "../platform/namespaces";

/** Why a region outside the supported partition is refused: unknown (with the nearest region), or in another partition. */
function regionProblem(region: string, partition: string | undefined): string {
  if (partition === undefined) {
    const hint = suggest(region, SUPPORTED_REGIONS);
    return hint
      ? `is not an AWS region; did you mean "${hint}"?`
      : `is not an AWS region; use one of ${SUPPORTED_REGIONS.join(", ")}`;
  }
  return (
    `is in the ${partition} partition; this stack's IAM ARNs are in the ${SUPPORTED_PARTITION} partition, ` +
    `so use one of its regions (e.g. us-east-1)`
  );
}

/**
 * `ray-gpu:region`: a region of the `aws` partition.
 * @internal
 */
export const RegionSchema = z.string().superRefine((region, ctx) => {
  const partition = (AWS_REGIONS as Readonly<Record<string, string>>)[region];
  if (partition !== SUPPORTED_PARTITION) ctx.addIssue({ code: "custom", message: regionProblem(region, partition) });
});

/**
 * `cluster.kubernetesVersion`: a minor version EKS offers with standard support.
 * @internal
 */
export const KubernetesVersionSchema = z.string().superRefine((version, ctx) => {
  const support = eksSupport(version);
  if (support === "standard") return;
  const use = `use one of ${STANDARD_EKS_VERSIONS.join(", ")}`;
  const v = (EKS_VERSIONS as Readonly<Record<string, { endOfStandardSupport: string; endOfExtendedSupport: string }>>)[
    version
  ];
  const message =
    support === "unknown"
      ? `is not a Kubernetes version EKS offers; ${use}`
      : support === "extended"
        ? `left EKS standard support on ${v!.endOfStandardSupport} (extended support costs more, and the cluster ` +
          `upgrades itself when standard support ends); ${use}`
        : `is no longer run by EKS (extended support ended ${v!.endOfExtendedSupport}); ${use}`;
  ctx.addIssue({ code: "custom", message });
});

/**
 * An IPv4 CIDR with octets 0-255, a prefix within `[minPrefix, maxPrefix]`, and no host bits set (AWS would round
 * `10.0.0.1/16` down silently; the message says to what).
 * @internal
 */
export function cidrSchema(minPrefix = 0, maxPrefix = 32, example = "203.0.113.0/24") {
  return z.string().superRefine((cidr, ctx) => {
    const [address = "", prefixText = "", ...rest] = cidr.split("/");
    const ip = ipv4(address);
    const prefix = prefixLength(prefixText) ?? NaN;
    if (rest.length > 0 || ip === undefined || !(prefix >= minPrefix && prefix <= maxPrefix)) {
      const range = minPrefix === 0 && maxPrefix === 32 ? "" : ` from /${minPrefix} to /${maxPrefix}`;
      ctx.addIssue({
        code: "custom",
        message: `must be an IPv4 CIDR${range} with octets 0-255 and a prefix without leading zeros, e.g. "${example}"`,
      });
      return;
    }
    const size = 2 ** (32 - prefix);
    const network = Math.floor(ip / size) * size;
    if (network !== ip)
      ctx.addIssue({ code: "custom", message: `has host bits set; the network is "${dotted(network)}/${prefix}"` });
  });
}

/**
 * A VPC range: a CIDR from /16 to /24 outside the special-purpose ranges no host can use (loopback, link-local,
 * multicast, "this network", reserved; RFC 6890).
 * @internal
 */
export const VpcCidrSchema = cidrSchema(16, 24, "10.0.0.0/16").superRefine((cidr, ctx) => {
  const unusable = unusableForVpc(cidr);
  if (unusable.length)
    ctx.addIssue({
      code: "custom",
      message:
        `overlaps ${unusable.map((u) => `${u.cidr} (${u.name})`).join(", ")}, where no node or pod address works; ` +
        `use a private range such as "10.0.0.0/16"`,
    });
});

/** Endings and beginnings S3 reserves for its own bucket types. */
const RESERVED_BUCKET_PREFIXES = ["xn--", "sthree-", "amzn-s3-demo-"] as const;
const RESERVED_BUCKET_SUFFIXES = ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"] as const;

/** Every S3 general purpose bucket naming rule a name breaks (empty when it is valid). */
export function bucketNameProblems(name: string): string[] {
  const problems: string[] = [];
  if (name.length < 3 || name.length > 63) problems.push("must be 3-63 characters long");
  if (!/^[a-z0-9.-]*$/.test(name)) problems.push("may hold only lowercase letters, digits, '.' and '-'");
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) problems.push("must begin and end with a letter or digit");
  if (name.includes("..")) problems.push("must not hold two adjacent periods");
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) problems.push("must not be formatted as an IP address");
  for (const p of RESERVED_BUCKET_PREFIXES) if (name.startsWith(p)) problems.push(`must not start with "${p}"`);
  for (const s of RESERVED_BUCKET_SUFFIXES) if (name.endsWith(s)) problems.push(`must not end with "${s}"`);
  return problems;
}

/**
 * An S3 general purpose bucket name. Rules: Amazon S3 User Guide, "General purpose bucket naming rules"
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
 * @internal
 */
export const BucketNameSchema = z.string().superRefine((name, ctx) => {
  const problems = bucketNameProblems(name);
  if (problems.length > 0)
    ctx.addIssue({ code: "custom", message: `is not a valid S3 bucket name: ${problems.join("; ")}` });
});

/**
 * A workload namespace: a DNS label, not reserved.
 * @internal
 */
export const WorkloadNamespaceSchema = z
  .string()
  .max(63)
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/,
    "must be a Kubernetes namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit",
  )
  .superRefine((ns, ctx) => {
    if (RESERVED_NAMESPACES.includes(ns) || ns.startsWith("kube-"))
      ctx.addIssue({
        code: "custom",
        message:
          `is a namespace the platform or Kubernetes uses (${RESERVED_NAMESPACES.join(", ")}, kube-*): the jobs' ` +
          `default-deny policies and Pod Security labels would apply to its pods; give the jobs a namespace of ` +
          `their own, e.g. "ray-jobs"`,
      });
  });
