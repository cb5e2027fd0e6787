/**
 * `Storage`: the S3 bucket (encryption, versioning, public access blocked, TLS-only policy, checkpoint lifecycle),
 * the Ray pods' service account bound through EKS Pod Identity to a role that may use only this bucket or its
 * prefix, and optional FSx for Lustre linked to the bucket.
 */
import { POD_SECURITY_LABELS } from "../workloads/security/namespace";
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { bucketAccessPolicy, kmsKeyPolicy, tlsOnlyBucketPolicy } from "../core/platform/iam";
import { boundServiceAccounts, podIdentityTrust } from "./pod-identity";
import type { StoragePlan } from "../core/platform/storage";
import { STORAGE_CONFIGMAP } from "../core/platform/storage";
import { childOptions, keptOptions } from "./child-options";

/**
 * Arguments of {@link Storage}. The Kubernetes provider of the cluster, and what the namespace waits for (the Pod Identity
 * agent), come through the resource options.
 */
export interface StorageArgs {
  /** From `planStorage(...)`. */
  readonly plan: StoragePlan;
  /** EKS cluster whose pods get the bucket role (Pod Identity); the role trusts that cluster only. */
  readonly clusterName: pulumi.Input<string>;
  /**
   * KMS key the bucket encrypts objects with (the Ray pods' role may use it).
   * @default - the AWS-managed `aws/s3` key
   */
  readonly kmsKeyArn?: pulumi.Input<string>;
  /**
   * The id of that key: given, the key gets a policy of its own (`kmsKeyPolicy`) naming the Ray pods' role,
   * `keyUserRoleArns` and FSx's service-linked role as its only users, instead of KMS's account-wide default.
   * @default - none: the key keeps the policy it has
   */
  readonly kmsKeyId?: pulumi.Input<string>;
  /**
   * Other roles that use the key (the EKS control plane's, which encrypts Kubernetes Secrets with it).
   * @default []
   */
  readonly keyUserRoleArns?: readonly pulumi.Input<string>[];
  /**
   * Protect the bucket from `pulumi destroy` and replacement, and keep it if it leaves the program.
   * @default false
   */
  readonly protect?: boolean;
  /**
   * Subnet for FSx (one of the nodes' private subnets). Needed when `plan.fsx` is set.
   * @default - none
   */
  readonly fsxSubnetId?: pulumi.Input<string>;
  /**
   * VPC of that subnet; Lustre ports (988, 1018-1023) are opened to its CIDR. Needed when `plan.fsx` is set.
   * @default - none
   */
  readonly vpcId?: pulumi.Input<string>;
}

/** The bucket, the workload namespace and the Ray pods' service account with access to the bucket only. */
export class Storage extends pulumi.ComponentResource {
  /** The bucket's name. */
  public readonly bucketName: pulumi.Output<string>;
  /** The bucket's ARN. */
  public readonly bucketArn: pulumi.Output<string>;
  /** The stack's own service account (`ray-workloads`); each job runs as its own (`plan.jobServiceAccounts`). */
  public readonly serviceAccountName: string;
  /** The stack's service account; objects in the namespace wait for it. */
  public readonly serviceAccount: k8s.core.v1.ServiceAccount;
  /** Each job's service account, bound to the bucket role. */
  public readonly jobServiceAccounts: readonly k8s.core.v1.ServiceAccount[];
  /** The workload namespace. */
  public readonly namespace: k8s.core.v1.Namespace;
  /** The IAM role Ray pods assume (Pod Identity). */
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: StorageArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:Storage", name, {}, opts);
    const p = args.plan;
    const bucket = this.bucket(name, args);
    this.guardBucket(name, p, bucket);
    const role = this.rayRole(name, args, bucket);
    const k8sChild = childOptions(this, opts);
    this.namespace = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      { metadata: { name: p.serviceAccount.namespace, labels: { ...POD_SECURITY_LABELS } } },
      k8sChild,
    );
    const inNamespace = { ...k8sChild, dependsOn: [this.namespace] };
    this.serviceAccount = this.rayPodObjects(name, p, bucket, inNamespace);
    const jobs = { clusterName: args.clusterName, namespace: p.serviceAccount.namespace, roleArn: role.arn };
    this.jobServiceAccounts = boundServiceAccounts(name, { ...jobs, names: p.jobServiceAccounts }, this, inNamespace);
    new aws.eks.PodIdentityAssociation(
      `${name}-identity`,
      {
        clusterName: args.clusterName,
        namespace: p.serviceAccount.namespace,
        serviceAccount: p.serviceAccount.name,
        roleArn: role.arn,
      },
      { parent: this },
    );
    const fsxId = p.fsx ? this.createFsx(name, p.fsx, bucket, args) : undefined;
    if (args.kmsKeyId !== undefined) this.keyPolicy(name, args, [role.arn, ...(args.keyUserRoleArns ?? [])], fsxId);
    this.bucketName = bucket.bucket;
    this.bucketArn = bucket.arn;
    this.serviceAccountName = p.serviceAccount.name;
    this.roleArn = role.arn;
    this.registerOutputs({ bucketName: this.bucketName, bucketArn: this.bucketArn, roleArn: this.roleArn });
  }

  /** The bucket (kept on delete when protected), encrypted with the platform's key by default, versioned. */
  private bucket(name: string, args: StorageArgs): aws.s3.Bucket {
    const p = args.plan;
    const child = { parent: this };
    const bucket = new aws.s3.Bucket(
      `${name}-bucket`,
      { bucket: p.bucketName, forceDestroy: p.forceDestroy },
      { ...child, ...keptOptions(args.protect ?? false) },
    );
    new aws.s3.BucketServerSideEncryptionConfiguration(
      `${name}-encryption`,
      {
        bucket: bucket.id,
        rules: [
          {
            applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: args.kmsKeyArn },
            bucketKeyEnabled: true,
          },
        ],
      },
      child,
    );
    new aws.s3.BucketVersioning(
      `${name}-versioning`,
      { bucket: bucket.id, versioningConfiguration: { status: "Enabled" } },
      child,
    );
    return bucket;
  }

  /** No public access, TLS only, and the lifecycle: old checkpoint versions expire, stale uploads are aborted. */
  private guardBucket(name: string, p: StoragePlan, bucket: aws.s3.Bucket): void {
    const child = { parent: this };
    const block = new aws.s3.BucketPublicAccessBlock(
      `${name}-public-access`,
      {
        bucket: bucket.id,
        blockPublicAcls: true,
        blockPublicPolicy: true,
        ignorePublicAcls: true,
        restrictPublicBuckets: true,
      },
      child,
    );
    new aws.s3.BucketPolicy(
      `${name}-tls-only`,
      { bucket: bucket.id, policy: bucket.arn.apply((arn) => JSON.stringify(tlsOnlyBucketPolicy(arn))) },
      { ...child, dependsOn: [block] },
    );
    new aws.s3.BucketLifecycleConfiguration(
      `${name}-lifecycle`,
      {
        bucket: bucket.id,
        rules: [
          {
            id: "expire-old-checkpoints",
            status: "Enabled",
            filter: { prefix: p.checkpointPrefix },
            noncurrentVersionExpiration: { noncurrentDays: p.checkpointRetentionDays },
          },
          {
            id: "abort-incomplete-uploads",
            status: "Enabled",
            filter: { prefix: p.prefix },
            abortIncompleteMultipartUpload: { daysAfterInitiation: p.abortIncompleteUploadDays },
          },
        ],
      },
      child,
    );
  }

  /**
   * The role Ray pods assume through Pod Identity (only the stack's and the jobs' service accounts on this cluster
   * may): read under the prefix, write and delete under the job's own folders, use the bucket's key.
   */
  private rayRole(name: string, args: StorageArgs, bucket: aws.s3.Bucket): aws.iam.Role {
    const p = args.plan;
    const child = { parent: this };
    const role = new aws.iam.Role(
      `${name}-ray-role`,
      {
        assumeRolePolicy: podIdentityTrust(
          args.clusterName,
          { namespace: p.serviceAccount.namespace, name: [p.serviceAccount.name, ...p.jobServiceAccounts] },
          this,
        ),
      },
      child,
    );
    new aws.iam.RolePolicy(
      `${name}-ray-bucket-access`,
      {
        role: role.id,
        policy: pulumi
          .all([bucket.arn, args.kmsKeyArn])
          .apply(([arn, key]) => JSON.stringify(bucketAccessPolicy(arn, p.prefix, key))),
      },
      child,
    );
    return role;
  }

  /** The Ray pods' service account, and the ConfigMap that tells RayJobs the bucket's name. */
  private rayPodObjects(
    name: string,
    p: StoragePlan,
    bucket: aws.s3.Bucket,
    inNamespace: pulumi.CustomResourceOptions,
  ): k8s.core.v1.ServiceAccount {
    const serviceAccount = new k8s.core.v1.ServiceAccount(
      `${name}-service-account`,
      {
        metadata: { name: p.serviceAccount.name, namespace: p.serviceAccount.namespace },
        // No Ray pod calls the Kubernetes API (autoscaling is off; the submitter talks to the dashboard), and EKS
        // Pod Identity mounts its own token: a pod that needs the API token sets automount on its own spec.
        automountServiceAccountToken: false,
      },
      inNamespace,
    );
    // RayJobs read the bucket from here (RAY_GPU_STORAGE_BUCKET): its name is known only once it exists.
    new k8s.core.v1.ConfigMap(
      `${name}-configmap`,
      {
        metadata: { name: STORAGE_CONFIGMAP, namespace: p.serviceAccount.namespace },
        data: { bucket: bucket.bucket, prefix: p.prefix },
      },
      inNamespace,
    );
    return serviceAccount;
  }

  /**
   * The key's own policy: the account administers it, only `users` (and FSx's service-linked role, which reads the
   * bucket for the file system) use it. The key exists before the roles, so the policy is a resource of its own.
   */
  private keyPolicy(name: string, args: StorageArgs, users: pulumi.Input<string>[], fsxId?: pulumi.Output<string>) {
    const parent = { parent: this };
    const account = aws.getCallerIdentityOutput({}, parent).accountId;
    const partition = aws.getPartitionOutput({}, parent).partition;
    const fs = pulumi.output(fsxId ?? "");
    const policy = pulumi.all([account, partition, fs, pulumi.all(users)]).apply(([accountId, part, fsId, roles]) => {
      const fsxFileSystemId = fsId || undefined;
      return JSON.stringify(kmsKeyPolicy({ partition: part, accountId, userRoleArns: roles, fsxFileSystemId }));
    });
    new aws.kms.KeyPolicy(`${name}-key-policy`, { keyId: args.kmsKeyId!, policy }, parent);
  }

  /** FSx for Lustre linked to the bucket: SCRATCH_2 imports through `importPath`, PERSISTENT_2 through a data repository association. */
  private createFsx(
    name: string,
    fsx: NonNullable<StoragePlan["fsx"]>,
    bucket: aws.s3.Bucket,
    args: StorageArgs,
  ): pulumi.Output<string> {
    if (args.fsxSubnetId === undefined || args.vpcId === undefined)
      throw new Error(`Storage ${name}: plan.fsx needs fsxSubnetId and vpcId`);
    const child = { parent: this };
    const cidr = aws.ec2.getVpcOutput({ id: args.vpcId }, child).cidrBlock;
    const sg = new aws.ec2.SecurityGroup(
      `${name}-fsx-sg`,
      {
        vpcId: args.vpcId,
        description: "Lustre from the cluster VPC",
        // Lustre: clients in the VPC and the file servers among themselves (self), on 988 and 1018-1023.
        ingress: [
          { protocol: "tcp", fromPort: 988, toPort: 988, cidrBlocks: [cidr], self: true },
          { protocol: "tcp", fromPort: 1018, toPort: 1023, cidrBlocks: [cidr], self: true },
        ],
        egress: [{ protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: [cidr] }],
      },
      child,
    );
    const path = pulumi.interpolate`s3://${bucket.bucket}/${fsx.importPath}`;
    const scratch = fsx.deploymentType === "SCRATCH_2";
    const fs = new aws.fsx.LustreFileSystem(
      `${name}-fsx`,
      {
        storageCapacity: fsx.storageCapacityGiB,
        deploymentType: fsx.deploymentType,
        subnetIds: args.fsxSubnetId,
        securityGroupIds: [sg.id],
        ...(scratch
          ? { importPath: path, autoImportPolicy: "NEW_CHANGED_DELETED" }
          : { perUnitStorageThroughput: 125, fileSystemTypeVersion: "2.15" }),
      },
      child,
    );
    if (!scratch) {
      new aws.fsx.DataRepositoryAssociation(
        `${name}-fsx-link`,
        {
          fileSystemId: fs.id,
          dataRepositoryPath: path,
          fileSystemPath: "/data",
          s3: {
            autoImportPolicy: { events: ["NEW", "CHANGED", "DELETED"] },
            autoExportPolicy: { events: ["NEW", "CHANGED", "DELETED"] },
          },
        },
        child,
      );
    }
    return fs.id;
  }
}
