/**
 * AWS regions, exhaustively, with their partition: the table `ray-gpu:region` is checked against. It equals the
 * `Region` enum of `@pulumi/aws` 7.48.0 (a test compares them, so a provider upgrade that adds a region fails until
 * the row is added here). The stack's IAM policy ARNs are in the `aws` partition, so only its regions are accepted;
 * g5 capacity differs by region and is not checked here (EC2 reports it at launch).
 */

/** AWS partitions. */
export const AWS_PARTITIONS = [
  "aws",
  "aws-cn",
  "aws-us-gov",
  "aws-iso",
  "aws-iso-b",
  "aws-iso-e",
  "aws-iso-f",
  "aws-eusc",
] as const;
export type AwsPartition = (typeof AWS_PARTITIONS)[number];

/** Every region of `@pulumi/aws`'s `Region` enum, by partition. */
export const AWS_REGIONS = {
  "af-south-1": "aws",
  "ap-east-1": "aws",
  "ap-east-2": "aws",
  "ap-northeast-1": "aws",
  "ap-northeast-2": "aws",
  "ap-northeast-3": "aws",
  "ap-south-1": "aws",
  "ap-south-2": "aws",
  "ap-southeast-1": "aws",
  "ap-southeast-2": "aws",
  "ap-southeast-3": "aws",
  "ap-southeast-4": "aws",
  "ap-southeast-5": "aws",
  "ap-southeast-6": "aws",
  "ap-southeast-7": "aws",
  "ca-central-1": "aws",
  "ca-west-1": "aws",
  "eu-central-1": "aws",
  "eu-central-2": "aws",
  "eu-north-1": "aws",
  "eu-south-1": "aws",
  "eu-south-2": "aws",
  "eu-west-1": "aws",
  "eu-west-2": "aws",
  "eu-west-3": "aws",
  "il-central-1": "aws",
  "me-central-1": "aws",
  "me-south-1": "aws",
  "mx-central-1": "aws",
  "sa-east-1": "aws",
  "us-east-1": "aws",
  "us-east-2": "aws",
  "us-west-1": "aws",
  "us-west-2": "aws",
  "cn-north-1": "aws-cn",
  "cn-northwest-1": "aws-cn",
  "eusc-de-east-1": "aws-eusc",
  "us-gov-east-1": "aws-us-gov",
  "us-gov-west-1": "aws-us-gov",
  "us-iso-east-1": "aws-iso",
  "us-iso-west-1": "aws-iso",
  "us-isob-east-1": "aws-iso-b",
  "us-isob-west-1": "aws-iso-b",
  "eu-isoe-west-1": "aws-iso-e",
  "us-isof-east-1": "aws-iso-f",
  "us-isof-south-1": "aws-iso-f",
} as const satisfies Readonly<Record<string, AwsPartition>>;

export type AwsRegion = keyof typeof AWS_REGIONS;

/** The partition whose ARNs the stack writes. */
export const SUPPORTED_PARTITION: AwsPartition = "aws";

/** Regions a stack may use: those of {@link SUPPORTED_PARTITION}, sorted. */
export const SUPPORTED_REGIONS: readonly AwsRegion[] = (Object.keys(AWS_REGIONS) as AwsRegion[])
  .filter((r) => AWS_REGIONS[r] === SUPPORTED_PARTITION)
  .sort();
