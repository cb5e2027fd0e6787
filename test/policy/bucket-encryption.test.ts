import { describe, expect, it } from "vitest";
import { bucketEncryptionViolations, type StackPolicyInput } from "../../policy/rules";

const BUCKET = "aws:s3/bucket:Bucket";
const BUCKET_V2 = "aws:s3/bucketV2:BucketV2";
const SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration";
const SSE_V2 = "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2";
const KMS = { rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: "k" } }] };

const bucket = (name: string, props: Record<string, unknown> = {}, type = BUCKET): StackPolicyInput => ({
  type,
  name,
  urn: `urn:pulumi:prod::ray::${type}::${name}`,
  props,
});

/** Inputs whose `bucket` is unknown, as in a preview that creates the bucket: reading it throws, as @pulumi/policy does. */
const unknownBucket = (): Record<string, unknown> =>
  Object.defineProperty({ ...KMS }, "bucket", {
    enumerable: true,
    get: () => {
      throw new Error("string value at .bucket can't be known during preview");
    },
  });

const names = (resources: StackPolicyInput[]) =>
  bucketEncryptionViolations(resources).map((v) => v.slice(0, v.indexOf(":")));

describe("bucket-encryption-present (stack rule)", () => {
  it("refuses a bucket with no encryption at all, of either type", () => {
    expect(names([bucket("a"), bucket("b", {}, BUCKET_V2)])).toEqual(["Bucket a", "BucketV2 b"]);
  });

  it("passes inline encryption, judged by bucket-kms-encryption", () => {
    const inline = bucket("a", { serverSideEncryptionConfiguration: { rule: {} } });
    const inlineV2 = bucket("b", { serverSideEncryptionConfigurations: [{ rules: [] }] }, BUCKET_V2);
    expect(names([inline, inlineV2])).toEqual([]);
  });

  it("matches a configuration in preview by the bucket its input came from, without reading the unknown name", () => {
    const a = bucket("a");
    const b = bucket("b");
    const sse: StackPolicyInput = {
      type: SSE_V2,
      name: "a-sse",
      props: unknownBucket(),
      propertyDependencies: { bucket: [{ type: BUCKET, name: "a", urn: a.urn! }] },
    };
    expect(names([a, b, sse])).toEqual(["Bucket b"]);
  });

  it("matches by a known name, or by the one bucket among its dependencies", () => {
    const byName: StackPolicyInput = { type: SSE, name: "s1", props: { ...KMS, bucket: "acme-ml" } };
    const byDependency: StackPolicyInput = {
      type: SSE,
      name: "s2",
      props: { ...KMS, bucket: "<computed>" },
      dependencies: [
        { type: "aws:kms/key:Key", name: "key" },
        { type: BUCKET, name: "b" },
      ],
    };
    expect(names([bucket("a", { bucket: "acme-ml" }), bucket("b"), bucket("c"), byName, byDependency])).toEqual([
      "Bucket c",
    ]);
  });

  it("does not count a configuration of another bucket", () => {
    const other: StackPolicyInput = {
      type: SSE,
      name: "s",
      props: { ...KMS, bucket: "acme-ml" },
      propertyDependencies: { bucket: [{ type: BUCKET, name: "other" }] },
    };
    expect(names([bucket("a", { bucket: "acme-ml" }), other])).toEqual(["Bucket a"]);
  });
});
