/**
 * IAM policy documents, least privilege: Ray pods may read and write only the stack's bucket (or its prefix);
 * the Cluster Autoscaler may change only Auto Scaling groups tagged for this cluster. Pure functions of ARNs.
 */

export interface PolicyStatement {
  readonly Sid?: string;
  readonly Effect: "Allow" | "Deny";
  readonly Principal?: unknown;
  readonly Action: string | readonly string[];
  /** Absent in trust policies. */
  readonly Resource?: string | readonly string[];
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export interface PolicyDocument {
  readonly Version: "2012-10-17";
  readonly Statement: readonly PolicyStatement[];
}

/**
 * The session tag EKS Pod Identity sets to the pod's service account (EKS user guide, "Grant Pods access to AWS
 * resources based on tags": `eks-cluster-arn`, `eks-cluster-name`, `kubernetes-namespace`,
 * `kubernetes-service-account`, `kubernetes-pod-name`, `kubernetes-pod-uid`), as an IAM policy variable: each job's
 * pods run as a service account named after the job, so the variable is the job's name.
 */
export const SERVICE_ACCOUNT_TAG = "${aws:PrincipalTag/kubernetes-service-account}";

/**
 * Folders of the prefix where each job writes under its own name: `checkpoints/<job>/`, `results/<job>/` and
 * `run-records/<job>/` (the record the runtime keeps when a job ends, `workload.runRecordPrefix`).
 */
export const JOB_WRITE_FOLDERS = ["checkpoints", "results", "run-records"] as const;

/**
 * The directory markers above a job's folders (`ray/`, `ray/checkpoints/`, `ray/results/`, `ray/run-records/`):
 * Arrow's S3 filesystem, which Ray Train and Ray Data write through, puts an empty object at every level when it creates a directory
 * (apache/arrow cpp/src/arrow/filesystem/s3fs.cc `S3FileSystem::CreateDir`, recursive).
 */
function markerKeys(prefix: string): string[] {
  const parts = prefix.split("/").filter(Boolean);
  const above = parts.map((_, i) => `${parts.slice(0, i + 1).join("/")}/`);
  return [...above, ...JOB_WRITE_FOLDERS.map((f) => `${prefix}${f}/`)];
}

/**
 * What the Ray pods' role may do in the bucket: list and read every object under `prefix` (datasets, and other jobs'
 * checkpoints to start from), but write and delete only under their own job's folders (`<prefix>checkpoints/<job>/`,
 * `<prefix>results/<job>/`, `<prefix>run-records/<job>/`, the job being the pod's service account,
 * {@link SERVICE_ACCOUNT_TAG}), plus the empty
 * directory markers above them; and use the bucket's key.
 */
export function bucketAccessPolicy(bucketArn: string, prefix: string, keyArn?: string): PolicyDocument {
  const own = JOB_WRITE_FOLDERS.map((f) => `${bucketArn}/${prefix}${f}/${SERVICE_ACCOUNT_TAG}/*`);
  return {
    Version: "2012-10-17",
    Statement: [
      { Sid: "LocateBucket", Effect: "Allow", Action: "s3:GetBucketLocation", Resource: bucketArn },
      {
        Sid: "ListPrefix",
        Effect: "Allow",
        Action: "s3:ListBucket",
        Resource: bucketArn,
        ...(prefix ? { Condition: { StringLike: { "s3:prefix": [`${prefix}*`] } } } : {}),
      },
      { Sid: "ReadObjects", Effect: "Allow", Action: "s3:GetObject", Resource: `${bucketArn}/${prefix}*` },
      {
        Sid: "WriteOwnObjects",
        Effect: "Allow",
        Action: ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
        Resource: own,
      },
      {
        Sid: "PutDirectoryMarkers",
        Effect: "Allow",
        Action: "s3:PutObject",
        Resource: markerKeys(prefix).map((k) => `${bucketArn}/${k}`),
      },
      // Objects are encrypted with the stack's KMS key: reading and writing them needs the key, and only it.
      ...(keyArn
        ? [
            {
              Sid: "UseBucketKey",
              Effect: "Allow" as const,
              Action: ["kms:Decrypt", "kms:GenerateDataKey"],
              Resource: keyArn,
            },
          ]
        : []),
    ],
  };
}

/** Who the stack's KMS key policy names. */
export interface KeyPolicyPrincipals {
  /** `aws`, `aws-cn`, `aws-us-gov`. */
  readonly partition: string;
  readonly accountId: string;
  /** Roles that encrypt and decrypt with the key (the Ray pods', the control plane's), by ARN. */
  readonly userRoleArns: readonly string[];
  /**
   * The FSx for Lustre file system linked to the bucket, whose service-linked role reads and writes the bucket's
   * objects (FSx for Lustre user guide, "Working with server-side encrypted Amazon S3 buckets").
   * @default - none
   */
  readonly fsxFileSystemId?: string | undefined;
}

/**
 * Administering a key without using it (AWS KMS developer guide, "Default key policy": the key administrators'
 * actions, less `kms:CreateGrant`, which {@link kmsKeyPolicy} allows only for AWS services).
 */
export const KMS_ADMIN_ACTIONS = [
  "kms:CancelKeyDeletion",
  "kms:CreateAlias",
  "kms:DeleteAlias",
  "kms:DescribeKey",
  "kms:DisableKey",
  "kms:DisableKeyRotation",
  "kms:EnableKey",
  "kms:EnableKeyRotation",
  "kms:GetKeyPolicy",
  "kms:GetKeyRotationStatus",
  "kms:ListAliases",
  "kms:ListGrants",
  "kms:ListKeyPolicies",
  "kms:ListResourceTags",
  "kms:PutKeyPolicy",
  "kms:RevokeGrant",
  "kms:ScheduleKeyDeletion",
  "kms:TagResource",
  "kms:UntagResource",
  "kms:UpdateAlias",
  "kms:UpdateKeyDescription",
] as const;

/** Using a key: what S3 (SSE-KMS), EKS (Secrets envelope encryption) and FSx call for the roles that read and write. */
export const KMS_USE_ACTIONS = [
  "kms:Decrypt",
  "kms:DescribeKey",
  "kms:Encrypt",
  "kms:GenerateDataKey*",
  "kms:ReEncrypt*",
] as const;

/**
 * The stack key's policy, instead of KMS's default (the account root with `kms:*`, which lets any principal of the
 * account whose IAM policy allows KMS use the key): the account administers it (IAM policies decide who, as with
 * the default) but does not use it; only `userRoleArns` encrypt and decrypt; grants only for AWS services
 * (`kms:GrantIsForAWSResource`: EKS creates one for the control plane when it creates the cluster). AWS KMS developer
 * guide, "Key policies in AWS KMS" and "Default key policy".
 */
export function kmsKeyPolicy(p: KeyPolicyPrincipals): PolicyDocument {
  const root = `arn:${p.partition}:iam::${p.accountId}:root`;
  // FSx for Lustre's per-file-system service-linked role for S3: its path and name as AWS's managed policy
  // FSxDeleteServiceLinkedRoleAccess scopes them (`role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/
  // AWSServiceRoleForFSxS3Access_*`, AWS Managed Policy Reference).
  const fsx = p.fsxFileSystemId
    ? [
        `arn:${p.partition}:iam::${p.accountId}:role/aws-service-role/s3.data-source.lustre.fsx.amazonaws.com/` +
          `AWSServiceRoleForFSxS3Access_${p.fsxFileSystemId}`,
      ]
    : [];
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "AccountAdministers",
        Effect: "Allow",
        Principal: { AWS: root },
        Action: KMS_ADMIN_ACTIONS,
        Resource: "*",
      },
      {
        Sid: "GrantsForAwsServices",
        Effect: "Allow",
        Principal: { AWS: root },
        Action: "kms:CreateGrant",
        Resource: "*",
        Condition: { Bool: { "kms:GrantIsForAWSResource": "true" } },
      },
      {
        Sid: "RolesUseKey",
        Effect: "Allow",
        Principal: { AWS: [...p.userRoleArns, ...fsx] },
        Action: KMS_USE_ACTIONS,
        Resource: "*",
      },
    ],
  };
}

/** Bucket policy: refuse every request that does not use TLS. */
export function tlsOnlyBucketPolicy(bucketArn: string): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Sid: "DenyInsecureTransport",
        Effect: "Deny",
        Principal: "*",
        Action: "s3:*",
        Resource: [bucketArn, `${bucketArn}/*`],
        Condition: { Bool: { "aws:SecureTransport": "false" } },
      },
    ],
  };
}

/** Who may take a Pod Identity role: one service account of one cluster, in one account. */
export interface PodIdentityScope {
  /** The account of the cluster and the role (`aws:SourceAccount` of EKS Pod Identity's request). */
  readonly accountId: string;
  /** The cluster's ARN, `arn:<partition>:eks:<region>:<account>:cluster/<name>` (session tag `eks-cluster-arn`). */
  readonly clusterArn: string;
  /** Namespace of the service account (session tag `kubernetes-namespace`). */
  readonly namespace: string;
  /** The service account, or any of several (session tag `kubernetes-service-account`). */
  readonly serviceAccount: string | readonly string[];
}

/**
 * Trust policy for roles that EKS Pod Identity hands to pods. With a scope, EKS Pod Identity may assume the role only
 * for a request from the account (`aws:SourceAccount`, against the cross-service confused deputy) carrying the session
 * tags it sets for the pods of one service account of one cluster (`aws:RequestTag/eks-cluster-arn`,
 * `kubernetes-namespace`, `kubernetes-service-account`; EKS user guide, "Create IAM role with trust policy required by
 * EKS Pod Identity" and "Enable or disable session tags"). An association that turns session tags off
 * (`disableSessionTags`) cannot use a scoped role. The cluster is matched on its session tag, not on `aws:SourceArn`,
 * which the guide does not document as the cluster's ARN for Pod Identity.
 * @param scope - who may take the role; without it, AWS's minimal policy: any association in the account that may
 *   pass the role, on any of its clusters
 */
export function podIdentityTrustPolicy(scope?: PodIdentityScope): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [
      {
        Effect: "Allow",
        Principal: { Service: "pods.eks.amazonaws.com" },
        Action: ["sts:AssumeRole", "sts:TagSession"],
        ...(scope ? { Condition: { StringEquals: podIdentityConditions(scope) } } : {}),
      },
    ],
  };
}

/** The `StringEquals` conditions of a scoped Pod Identity trust policy. */
function podIdentityConditions(scope: PodIdentityScope): Record<string, string | readonly string[]> {
  return {
    "aws:SourceAccount": scope.accountId,
    "aws:RequestTag/eks-cluster-arn": scope.clusterArn,
    "aws:RequestTag/kubernetes-namespace": scope.namespace,
    "aws:RequestTag/kubernetes-service-account": scope.serviceAccount,
  };
}

/** Trust policy for an AWS service role (EKS control plane, EC2 nodes). */
export function serviceTrustPolicy(service: string): PolicyDocument {
  return {
    Version: "2012-10-17",
    Statement: [{ Effect: "Allow", Principal: { Service: service }, Action: "sts:AssumeRole" }],
  };
}

/** AWS managed policies of the node role. */
export const NODE_ROLE_MANAGED_POLICIES = [
  "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
  "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
  "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
] as const;

/** AWS managed policy of the cluster role. */
export const CLUSTER_ROLE_MANAGED_POLICIES = ["arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"] as const;

/** `<account>/<role name>` of a role ARN (any path) or of an STS assumed-role session ARN; undefined for others. */
function roleKey(arn: string): string | undefined {
  const role = /^arn:aws[a-z-]*:iam::(\d{12}):role\/(?:[^/]*\/)*([^/]+)$/.exec(arn);
  const session = /^arn:aws[a-z-]*:sts::(\d{12}):assumed-role\/([^/]+)\/[^/]+$/.exec(arn);
  const m = role ?? session;
  return m ? `${m[1]}/${m[2]}` : undefined;
}

/**
 * The `adminRoleArns` entry that names the identity deploying the cluster, if any. With
 * `bootstrapClusterCreatorAdminPermissions: true` EKS gives the creating principal (for an assumed role, its role) an
 * access entry when it creates the cluster, and a principal can have only one: a second `CreateAccessEntry` fails
 * with `ResourceInUseException: The specified access entry resource is already in use on this cluster` (EKS API
 * reference, CreateAccessEntry; terraform-aws-modules/terraform-aws-eks issues #2968, #3293). Roles are matched by
 * account and name (role names are unique in an account, whatever their path), so an SSO role written with or
 * without its `aws-reserved/sso.amazonaws.com/` path is found.
 * @param callerArn - `sts:GetCallerIdentity`'s ARN: an assumed-role session, a role or a user
 */
export function creatorAdminEntry(adminRoleArns: readonly string[], callerArn: string): string | undefined {
  const caller = roleKey(callerArn);
  return caller ? adminRoleArns.find((a) => roleKey(a) === caller) : undefined;
}

/** Why an `adminRoleArns` entry naming the deploying identity is refused, and the fix. */
export const creatorAdminMessage = (entry: string, callerArn: string) =>
  `ray-gpu:platform.cluster.adminRoleArns: ${entry} is the identity running pulumi (${callerArn}); EKS already ` +
  `gives the cluster's creator an access entry with cluster admin, and creating a second one fails ` +
  `(ResourceInUseException) once the cluster exists: drop it from adminRoleArns, or deploy as another identity`;
