/**
 * Which input changes replace a resource (delete and create) instead of updating it in place, per resource type the
 * platform creates, and which types hold state a replacement or deletion would lose. One table: `ray-gpu diff` reads
 * it to mark replacements and to fire `--fail-on replace`.
 *
 * The AWS rows are the attributes the Terraform AWS provider marks `ForceNew` (Pulumi's AWS provider is bridged from
 * it, and its `pulumi preview` shows them as `replace`); the Kubernetes rows are the Pulumi Kubernetes provider's own
 * rule (an object's identity is its name and namespace). Sources are named per row.
 */

/** How one resource type reacts to a change of its inputs. */
export interface ReplacementRule {
  /**
   * Input paths (Pulumi's names, dotted) whose change replaces the resource; a path covers everything under it.
   * `*` means every input.
   */
  readonly replaceOn: readonly string[];
  /** Input paths whose removal (not change) replaces the resource. @default none */
  readonly replaceWhenRemoved?: readonly string[];
  /**
   * Types that a replacement of this one replaces too, although their own inputs look unchanged in an offline preview
   * (the new resource's outputs are unknown until it exists). @default none
   */
  readonly cascadesTo?: readonly string[];
  /**
   * Inputs whose change replaces resources the component creates inside (a VPC's subnets), not the component itself:
   * `of` picks them from the inputs, and the types in `cascadesTo` are replaced with them. @default none
   */
  readonly parts?: {
    readonly what: string;
    readonly of: (inputs: Readonly<Record<string, unknown>>) => unknown;
    readonly cascadesTo: readonly string[];
  };
  /** What a replacement or deletion loses, for types that hold state; absent for types that hold none. */
  readonly state?: string;
  /** Where the rule comes from. */
  readonly source: string;
}

const TF = "hashicorp/terraform-provider-aws v6 (ForceNew)";
/** Terraform AWS v6 added `region` to every regional resource; "changing the value of region will force replacement". */
const REGIONAL = "region";
/** What lives on an EKS cluster: its node groups, add-ons, Pod Identity associations and every Kubernetes object. */
const ON_THE_CLUSTER = [
  "aws:eks/nodeGroup:NodeGroup",
  "aws:eks/addon:Addon",
  "aws:eks/podIdentityAssociation:PodIdentityAssociation",
  "pulumi:providers:kubernetes",
  "kubernetes:*",
];

/**
 * Every resource type `ray-gpu preview` lists that an input change can replace, by type token; Kubernetes objects
 * follow the rule below. Our components (`ray-gpu:index:*`) have none: their children are compared one by one.
 */
export const REPLACEMENT: Readonly<Record<string, ReplacementRule>> = {
  "aws:eks/cluster:Cluster": {
    replaceOn: [
      REGIONAL,
      "name",
      "roleArn",
      "bootstrapSelfManagedAddons",
      "accessConfig.bootstrapClusterCreatorAdminPermissions",
      "kubernetesNetworkConfig.ipFamily",
      "kubernetesNetworkConfig.serviceIpv4Cidr",
      "outpostConfig",
    ],
    replaceWhenRemoved: ["encryptionConfig"],
    // A new cluster's name and endpoint are unknown until it exists: the Kubernetes provider's config changes, which
    // replaces every object (pulumi-kubernetes provider.go, DiffConfig), and the node groups' clusterName is ForceNew.
    cascadesTo: ON_THE_CLUSTER,
    state: "the cluster: every node, running job and in-cluster object",
    source: `${TF}, internal/service/eks/cluster.go (subnets, security groups, version and endpoint access update in place)`,
  },
  "aws:s3/bucket:Bucket": {
    replaceOn: [REGIONAL, "bucket", "bucketPrefix", "objectLockEnabled"],
    state: "the bucket's datasets, checkpoints and results (a new bucket starts empty)",
    source: `${TF}, internal/service/s3/bucket.go`,
  },
  ...bucketParts([
    "bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    "bucketPolicy:BucketPolicy",
    "bucketPublicAccessBlock:BucketPublicAccessBlock",
    "bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "bucketVersioning:BucketVersioning",
  ]),
  "aws:kms/key:Key": {
    replaceOn: [REGIONAL, "customerMasterKeySpec", "keyUsage", "multiRegion", "customKeyStoreId", "xksKeyId"],
    state:
      "the key that encrypts the bucket's objects and the cluster's Secrets (what it encrypted becomes unreadable)",
    source: `${TF}, internal/service/kms/key.go`,
  },
  "aws:kms/keyPolicy:KeyPolicy": {
    replaceOn: [REGIONAL, "keyId"],
    source: `${TF}, internal/service/kms/key_policy.go`,
  },
  "awsx:ec2:Vpc": {
    replaceOn: [REGIONAL, "cidrBlock", "ipv4IpamPoolId", "ipv4NetmaskLength"],
    // An EKS cluster cannot move to another VPC (its subnets update in place only within the VPC it was created in).
    cascadesTo: ["aws:eks/cluster:Cluster", ...ON_THE_CLUSTER],
    parts: {
      what: "its subnets",
      // Subnets are named by index and get their CIDRs by dividing the VPC's among the zones: a new zone list or
      // subnet layout gives existing subnets a new zone or CIDR (both ForceNew). Tags change in place.
      of: (inputs) => ({
        zones: inputs["availabilityZoneNames"] ?? inputs["numberOfAvailabilityZones"],
        strategy: inputs["subnetStrategy"],
        specs: ((inputs["subnetSpecs"] as Record<string, unknown>[] | undefined) ?? []).map(
          ({ tags: _tags, ...spec }) => spec,
        ),
      }),
      cascadesTo: ["aws:eks/nodeGroup:NodeGroup", "aws:fsx/lustreFileSystem:LustreFileSystem"],
    },
    state: "the network the cluster's subnets live in (a new VPC means a new cluster)",
    source:
      `${TF}, internal/service/ec2/vpc_.go (cidr_block) and vpc_subnet.go (vpc_id, availability_zone, cidr_block); ` +
      "pulumi/pulumi-awsx awsx/ec2/vpc.ts (subnets named by index, CIDRs divided by zone count)",
  },
  "aws:ec2/securityGroup:SecurityGroup": {
    replaceOn: [REGIONAL, "name", "namePrefix", "description", "vpcId"],
    source: `${TF}, internal/service/ec2/vpc_security_group.go`,
  },
  "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": {
    replaceOn: [REGIONAL, "securityGroupId"],
    source:
      `${TF}, internal/service/ec2/vpc_security_group_ingress_rule.go (security_group_id RequiresReplace; the rule's ` +
      "other fields change in place through ModifySecurityGroupRules)",
  },
  "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": {
    replaceOn: [REGIONAL, "securityGroupId"],
    source: `${TF}, internal/service/ec2/vpc_security_group_egress_rule.go (the ingress rule's schema, for egress)`,
  },
  "aws:ec2/placementGroup:PlacementGroup": {
    replaceOn: [REGIONAL, "name", "strategy", "partitionCount", "spreadLevel"],
    source: `${TF}, internal/service/ec2/ec2_placement_group.go (every argument)`,
  },
  "aws:fsx/lustreFileSystem:LustreFileSystem": {
    replaceOn: [
      REGIONAL,
      "deploymentType",
      "storageType",
      "subnetIds",
      "securityGroupIds",
      "importPath",
      "exportPath",
      "importedFileChunkSize",
      "kmsKeyId",
      "fileSystemTypeVersion",
      "driveCacheType",
    ],
    state: "the Lustre file system's contents (files not yet exported to the bucket)",
    source: `${TF}, internal/service/fsx/lustre_file_system.go`,
  },
  "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation": {
    replaceOn: [REGIONAL, "fileSystemId", "fileSystemPath", "dataRepositoryPath", "batchImportMetaDataOnCreate"],
    source: `${TF}, internal/service/fsx/data_repository_association.go`,
  },
  "aws:eks/accessEntry:AccessEntry": {
    replaceOn: [REGIONAL, "clusterName", "principalArn", "type"],
    source: `${TF}, internal/service/eks/access_entry.go`,
  },
  "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": {
    replaceOn: [REGIONAL, "clusterName", "principalArn", "policyArn"],
    source: `${TF}, internal/service/eks/access_policy_association.go`,
  },
  "aws:eks/nodeGroup:NodeGroup": {
    replaceOn: [
      REGIONAL,
      "amiType",
      "capacityType",
      "clusterName",
      "diskSize",
      "instanceTypes",
      "nodeGroupName",
      "nodeGroupNamePrefix",
      "nodeRoleArn",
      "subnetIds",
      "remoteAccess",
      "launchTemplate.id",
      "launchTemplate.name",
    ],
    source: `${TF}, internal/service/eks/node_group.go`,
  },
  "aws:ec2/launchTemplate:LaunchTemplate": {
    replaceOn: [REGIONAL, "name", "namePrefix"],
    source: `${TF}, internal/service/ec2/ec2_launch_template.go (other changes make a new version)`,
  },
  "aws:iam/role:Role": {
    replaceOn: ["name", "namePrefix", "path"],
    source: `${TF}, internal/service/iam/role.go (IAM is global: no region)`,
  },
  "aws:iam/rolePolicy:RolePolicy": {
    replaceOn: ["name", "namePrefix", "role"],
    source: `${TF}, internal/service/iam/role_policy.go`,
  },
  "aws:iam/rolePolicyAttachment:RolePolicyAttachment": {
    replaceOn: ["role", "policyArn"],
    source: `${TF}, internal/service/iam/role_policy_attachment.go`,
  },
  "aws:autoscaling/tag:Tag": {
    replaceOn: ["*"],
    source: `${TF}, internal/service/autoscaling/tag.go (every argument)`,
  },
  "aws:eks/addon:Addon": {
    replaceOn: [REGIONAL, "addonName", "clusterName"],
    source: `${TF}, internal/service/eks/addon.go`,
  },
  "aws:eks/podIdentityAssociation:PodIdentityAssociation": {
    replaceOn: [REGIONAL, "clusterName", "namespace", "serviceAccount"],
    source: `${TF}, internal/service/eks/pod_identity_association.go`,
  },
  "pulumi:providers:aws": {
    replaceOn: ["region"],
    cascadesTo: ["aws:*", "awsx:*", ...ON_THE_CLUSTER],
    source: "pulumi/pulumi-aws: a provider whose region changes is replaced, and so is every resource it manages",
  },
  "pulumi:providers:kubernetes": {
    // The kubeconfig is a secret in the preview (redacted on both sides); the cluster it names is compared as the
    // stack's cluster target instead (see diffResources).
    replaceOn: ["kubeconfig", "context", "cluster", "clusterIdentifier"],
    cascadesTo: ["kubernetes:*"],
    source:
      "pulumi/pulumi-kubernetes, provider/pkg/provider/provider.go (DiffConfig: a new cluster replaces every object)",
  },
  "random:index/randomPassword:RandomPassword": {
    replaceOn: ["*"],
    source: "pulumi/pulumi-random (terraform-provider-random: every argument of random_password is RequiresReplace)",
  },
  "kubernetes:helm.sh/v3:Release": {
    replaceOn: ["name", "namespace"],
    source: "pulumi/pulumi-kubernetes, provider/pkg/provider/helm_release.go (Diff: name and namespace replace)",
  },
};

/** Every Kubernetes object: its identity is its name and namespace (pulumi/pulumi-kubernetes, provider/pkg/provider/provider.go). */
const KUBERNETES_OBJECT: ReplacementRule = {
  replaceOn: ["metadata.name", "metadata.namespace"],
  source: "pulumi/pulumi-kubernetes, provider/pkg/provider/provider.go (Diff: a changed name or namespace replaces)",
};

/**
 * Kubernetes kinds with more than their identity: ConfigMap and Secret contents replace the object (the provider's
 * enableConfigMapMutable and enableSecretMutable are off here), and what a Namespace holds goes with it.
 */
const KUBERNETES_KINDS: Readonly<Record<string, { replaceOn?: readonly string[]; state?: string }>> = {
  "kubernetes:core/v1:ConfigMap": { replaceOn: ["data", "binaryData", "immutable"] },
  "kubernetes:core/v1:Secret": { replaceOn: ["type", "data", "stringData", "immutable"] },
  "kubernetes:core/v1:Namespace": { state: "the workload namespace and every job, Secret and ConfigMap in it" },
};

/** The bucket's configuration resources: each names its bucket with a ForceNew `bucket`. */
function bucketParts(tokens: readonly string[]): Record<string, ReplacementRule> {
  return Object.fromEntries(
    tokens.map((t) => [
      `aws:s3/${t}`,
      {
        replaceOn: [REGIONAL, "bucket", "expectedBucketOwner"],
        source: `${TF}, internal/service/s3/ (bucket and expected_bucket_owner of each bucket configuration)`,
      },
    ]),
  );
}

/** The rule for a type, or undefined when no input change replaces it (components, policies, tags). */
export function replacementRule(type: string): ReplacementRule | undefined {
  if (REPLACEMENT[type]) return REPLACEMENT[type];
  if (type.startsWith("kubernetes:")) {
    const kind = KUBERNETES_KINDS[type];
    return kind
      ? { ...KUBERNETES_OBJECT, ...kind, replaceOn: [...KUBERNETES_OBJECT.replaceOn, ...(kind.replaceOn ?? [])] }
      : KUBERNETES_OBJECT;
  }
  return undefined;
}

/** What a replacement or deletion of this type loses, or undefined when it holds no state. */
export function stateOf(type: string): string | undefined {
  return replacementRule(type)?.state;
}

/** Whether `type` is named by one of `types` (`kubernetes:*` names every Kubernetes type). */
export function typeMatches(type: string, types: readonly string[]): boolean {
  return types.some((t) => (t.endsWith("*") ? type.startsWith(t.slice(0, -1)) : type === t));
}

/** Whether a changed input path is covered by one of `paths` (a path covers everything under it; `*` covers all). */
export function coveredBy(path: string, paths: readonly string[]): boolean {
  return paths.some((p) => p === "*" || path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`));
}
