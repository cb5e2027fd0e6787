/**
 * The stack rule on buckets: every `aws:s3` Bucket (and the deprecated BucketV2) has default encryption, inline or by
 * an encryption-configuration resource whose `bucket` is that bucket. Without one S3 encrypts with SSE-S3 (AES256), a
 * key the stack does not own; `bucket-kms-encryption` then judges the configuration that is there. Pure.
 *
 * A configuration names its bucket by an output (`bucket: bucket.id`), unknown in a preview that creates the bucket:
 * it is matched by the resource that output came from (`propertyDependencies.bucket`, known in preview; without
 * those, the bucket among its dependencies), else by a known name (`bucket` of both). When neither decides in preview,
 * reading the unknown value makes `@pulumi/policy` report that the rule cannot run during preview; it runs again, with
 * every value known, during `pulumi up`.
 */
import { arr, kindOf, nonEmpty, obj, violation, type PolicyInput } from "./inputs";

const BUCKET = "aws:s3/bucket:Bucket";
const BUCKET_V2 = "aws:s3/bucketV2:BucketV2";
const SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration";
const SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2";

/** The name of the stack rule. */
export const BUCKET_ENCRYPTION_RULE_NAME = "bucket-encryption-present";

/** Another resource of the stack, as a dependency names it. */
interface Ref {
  readonly type: string;
  readonly name: string;
  readonly urn?: string | undefined;
}

/** A resource the stack holds: a policy input with its URN and the resources it takes inputs from. */
export interface StackPolicyInput extends PolicyInput {
  /** @default - matched by type and name */
  readonly urn?: string;
  /** Per input, the resources whose outputs it takes (`@pulumi/policy`'s `propertyDependencies`). @default none */
  readonly propertyDependencies?: Readonly<Record<string, readonly Ref[]>>;
  /** Every resource it depends on, read when `propertyDependencies` is not given. @default none */
  readonly dependencies?: readonly Ref[];
}

/** Whether each bucket type has default encryption inline (judged by `bucket-kms-encryption`). */
const INLINE: Readonly<Record<string, (props: Readonly<Record<string, unknown>>) => boolean>> = {
  [BUCKET]: (p) => nonEmpty(p["serverSideEncryptionConfiguration"]),
  [BUCKET_V2]: (p) => arr(p["serverSideEncryptionConfigurations"]).length > 0,
};

const same = (a: Ref, b: StackPolicyInput) =>
  a.urn !== undefined && b.urn !== undefined ? a.urn === b.urn : a.type === b.type && a.name === b.name;

/** Whether a configuration names a bucket: by the resource its `bucket` came from, else by a known name. */
function configures(config: StackPolicyInput, bucket: StackPolicyInput): boolean {
  const from =
    config.propertyDependencies?.["bucket"] ?? (config.dependencies ?? []).filter((d) => INLINE[d.type] !== undefined);
  if (from.some((d) => same(d, bucket))) return true;
  if (from.some((d) => INLINE[d.type] !== undefined)) return false;
  const name = obj(config.props)["bucket"];
  return typeof name === "string" && name !== "" && name === bucket.props["bucket"];
}

/** Stack rule: every bucket has default encryption, inline or by a configuration resource of its own. */
export function bucketEncryptionViolations(resources: readonly StackPolicyInput[]): string[] {
  const configs = resources.filter((r) => r.type === SSE || r.type === SSE_V2);
  return resources
    .filter((b) => INLINE[b.type] !== undefined && !INLINE[b.type]!(b.props))
    .filter((b) => !configs.some((c) => configures(c, b)))
    .map((b) =>
      violation(
        b,
        "default encryption",
        `is not configured (no inline configuration, and no BucketServerSideEncryptionConfiguration names this ` +
          `${kindOf(b.type)}), so S3 encrypts with SSE-S3 (AES256), not a key of the stack's`,
        "add an aws.s3.BucketServerSideEncryptionConfiguration with bucket: <bucket>.id, sseAlgorithm aws:kms and " +
          "kmsMasterKeyId the stack's KMS key",
      ),
    );
}
