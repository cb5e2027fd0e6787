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

/** Read and write objects under `prefix` of one bucket, and list that prefix. */
export function bucketAccessPolicy(bucketArn: string, prefix: string, keyArn?: string): PolicyDocument {
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
      {
        Sid: "ReadWriteObjects",
        Effect: "Allow",
        Action: [
          "s3:GetObject",
          "s3:PutObject",
          "s3:DeleteObject",
          "s3:AbortMultipartUpload",
          "s3:ListMultipartUploadParts",
        ],
        Resource: `${bucketArn}/${prefix}*`,
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
  /** The service account (session tag `kubernetes-service-account`). */
  readonly serviceAccount: string;
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
function podIdentityConditions(scope: PodIdentityScope): Record<string, string> {
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
