/**
 * `EksCluster`: a new EKS control plane (pinned version, API access entries, managed add-ons including the Pod
 * Identity agent) or an existing cluster adopted by name, plus the node role and a Kubernetes provider.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ClusterConfig } from "../core/config/platform";
import { addonsOfStage, EKS_ADDON_CONFIG, type AddonStage } from "../core/platform/addons";
import type { SecurityPlan } from "../core/platform/security";
import { firstOf, listOf } from "./outputs";
import {
  CLUSTER_ROLE_MANAGED_POLICIES,
  creatorAdminEntry,
  creatorAdminMessage,
  NODE_ROLE_MANAGED_POLICIES,
  serviceTrustPolicy,
} from "../core/platform/iam";

/** Arguments of {@link EksCluster}. */
export interface EksClusterArgs {
  /** Create a cluster (`mode: create`, with its name and version) or adopt one by name (`mode: existing`). */
  readonly cluster: ClusterConfig;
  /** AWS region of the cluster (for the kubeconfig's `aws eks get-token`). */
  readonly region: string;
  /** Logging, upgrade policy (from `planSecurity`); applied to a created cluster only. */
  readonly security: SecurityPlan;
  /**
   * KMS key that envelope-encrypts the Kubernetes Secrets of a created cluster (cannot be turned off later).
   * @default - EKS's own AWS-owned key
   */
  readonly secretsKeyArn?: pulumi.Input<string>;
  /**
   * Private subnets of a new cluster, for its nodes. Ignored when adopting.
   * @default []
   */
  readonly privateSubnetIds?: pulumi.Input<string[]>;
  /**
   * Public subnets of a new cluster, for load balancers. Ignored when adopting.
   * @default []
   */
  readonly publicSubnetIds?: pulumi.Input<string[]>;
}

/** Kubeconfig that authenticates with `aws eks get-token` (no long-lived secret in state). */
function kubeconfig(
  name: pulumi.Input<string>,
  endpoint: pulumi.Input<string>,
  ca: pulumi.Input<string>,
  region: string,
): pulumi.Output<string> {
  return pulumi.all([name, endpoint, ca]).apply(([n, e, c]) =>
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: n, cluster: { server: e, "certificate-authority-data": c } }],
      contexts: [{ name: n, context: { cluster: n, user: n } }],
      "current-context": n,
      users: [
        {
          name: n,
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1beta1",
              command: "aws",
              args: ["eks", "get-token", "--cluster-name", n, "--region", region],
            },
          },
        },
      ],
    }),
  );
}

/** A cluster config of `mode: create`. */
type CreatedClusterConfig = Extract<ClusterConfig, { mode: "create" }>;

/** What creating or adopting a cluster gives the component: one record, the same for both. */
interface ClusterOutputs {
  readonly clusterName: pulumi.Output<string>;
  readonly nodeSubnetIds: pulumi.Output<string[]>;
  readonly vpcId: pulumi.Output<string>;
  readonly clusterSecurityGroupId: pulumi.Output<string>;
  readonly kubernetesVersion: pulumi.Output<string | undefined>;
  readonly kubeconfig: pulumi.Output<string>;
  readonly ready: pulumi.Resource[];
}

/** The control plane's inputs: endpoint access, logs, upgrade policy, Secrets encryption, API-only access entries. */
function clusterArgs(
  args: EksClusterArgs,
  c: CreatedClusterConfig,
  roleArn: pulumi.Input<string>,
): aws.eks.ClusterArgs {
  return {
    name: c.name,
    version: c.kubernetesVersion,
    roleArn,
    vpcConfig: {
      subnetIds: pulumi
        .all([listOf(args.privateSubnetIds), listOf(args.publicSubnetIds)])
        .apply(([a, b]) => [...a, ...b]),
      endpointPrivateAccess: true,
      endpointPublicAccess: c.publicEndpoint,
      ...(c.publicEndpoint ? { publicAccessCidrs: c.publicAccessCidrs } : {}),
    },
    enabledClusterLogTypes: [...args.security.controlPlaneLogTypes],
    upgradePolicy: { supportType: args.security.supportType },
    ...(args.secretsKeyArn
      ? { encryptionConfig: { provider: { keyArn: args.secretsKeyArn }, resources: ["secrets"] } }
      : {}),
    accessConfig: { authenticationMode: "API", bootstrapClusterCreatorAdminPermissions: true },
  };
}

/**
 * A new EKS control plane with its managed add-ons, or an existing cluster adopted by name; the node role and a
 * Kubernetes provider. Node groups wait for `ready` (the DaemonSet add-ons); then call `addNodeAddons([cpuNodeGroup])`
 * for the managed CoreDNS, which needs nodes (until then EKS's own self-managed copy runs), and let in-cluster
 * releases wait for what it returns.
 */
export class EksCluster extends pulumi.ComponentResource {
  public readonly clusterName: pulumi.Output<string>;
  public readonly nodeRoleArn: pulumi.Output<string>;
  /** The control plane's role, which encrypts Kubernetes Secrets with the stack's key; undefined when adopting. */
  public clusterRoleArn: pulumi.Output<string> | undefined;
  /** Private subnets the node groups use. */
  public readonly nodeSubnetIds: pulumi.Output<string[]>;
  public readonly vpcId: pulumi.Output<string>;
  /**
   * The security group EKS made for the cluster (control plane and nodes): an EFA node group's interfaces list it
   * beside their own, since a launch template that names security groups makes EKS leave it out.
   */
  public readonly clusterSecurityGroupId: pulumi.Output<string>;
  /** Kubernetes minor of the control plane (`1.36`); what the cloud reports for an adopted cluster. */
  public readonly kubernetesVersion: pulumi.Output<string | undefined>;
  public readonly provider: k8s.Provider;
  /** Kubeconfig of the cluster (authenticates with `aws eks get-token`; no credential inside), as a secret. */
  public readonly kubeconfig: pulumi.Output<string>;
  /**
   * What node groups wait for: the managed add-ons that run as DaemonSets (pod network, kube-proxy, Pod Identity
   * agent) of a new cluster; empty when adopting.
   */
  public readonly ready: pulumi.Resource[];
  private readonly name: string;
  private created: aws.eks.Cluster | undefined;

  constructor(name: string, args: EksClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:EksCluster", name, {}, opts);
    this.name = name;
    const nodeRole = this.nodeRole();
    this.nodeRoleArn = nodeRole.arn;
    const c = args.cluster;
    const out = c.mode === "create" ? this.create(args, c) : this.adopt(args, c, nodeRole);
    this.clusterName = out.clusterName;
    this.nodeSubnetIds = out.nodeSubnetIds;
    this.vpcId = out.vpcId;
    this.clusterSecurityGroupId = out.clusterSecurityGroupId;
    this.kubernetesVersion = out.kubernetesVersion;
    this.ready = out.ready;
    this.kubeconfig = pulumi.secret(out.kubeconfig);
    this.provider = new k8s.Provider(
      `${name}-k8s`,
      { kubeconfig: this.kubeconfig, enableServerSideApply: true },
      { parent: this },
    );
    this.registerOutputs({ clusterName: this.clusterName, nodeRoleArn: this.nodeRoleArn, vpcId: this.vpcId });
  }

  /** The role every node group's instances take, with the managed policies nodes need. */
  private nodeRole(): aws.iam.Role {
    const child = { parent: this };
    const role = new aws.iam.Role(
      `${this.name}-node-role`,
      { assumeRolePolicy: JSON.stringify(serviceTrustPolicy("ec2.amazonaws.com")) },
      child,
    );
    for (const arn of NODE_ROLE_MANAGED_POLICIES)
      new aws.iam.RolePolicyAttachment(
        `${this.name}-node-${arn.split("/").pop()}`,
        { role: role.name, policyArn: arn },
        child,
      );
    return role;
  }

  /** A new control plane: its role, the cluster, the add-ons nodes wait for, and the admins' access entries. */
  private create(args: EksClusterArgs, c: CreatedClusterConfig): ClusterOutputs {
    const { role, attachments } = this.clusterRole();
    this.clusterRoleArn = role.arn;
    const cluster = new aws.eks.Cluster(`${this.name}-eks`, clusterArgs(args, c, role.arn), {
      parent: this,
      dependsOn: attachments,
    });
    this.created = cluster;
    const ready = this.managedAddons("beforeNodes", []);
    const checked = c.adminRoleArns.length > 0 ? this.notTheCreator(c.adminRoleArns) : undefined;
    for (const arn of c.adminRoleArns) this.adminAccess(cluster, arn, checked);
    return {
      clusterName: cluster.name,
      nodeSubnetIds: listOf(args.privateSubnetIds),
      vpcId: cluster.vpcConfig.vpcId,
      clusterSecurityGroupId: cluster.vpcConfig.clusterSecurityGroupId,
      kubernetesVersion: pulumi.output(c.kubernetesVersion),
      kubeconfig: kubeconfig(cluster.name, cluster.endpoint, cluster.certificateAuthority.data, args.region),
      ready,
    };
  }

  /** The control plane's role, with the managed policies EKS needs (the cluster waits for the attachments). */
  private clusterRole(): { role: aws.iam.Role; attachments: aws.iam.RolePolicyAttachment[] } {
    const child = { parent: this };
    const role = new aws.iam.Role(
      `${this.name}-cluster-role`,
      { assumeRolePolicy: JSON.stringify(serviceTrustPolicy("eks.amazonaws.com")) },
      child,
    );
    const attachments = CLUSTER_ROLE_MANAGED_POLICIES.map(
      (arn) =>
        new aws.iam.RolePolicyAttachment(
          `${this.name}-cluster-${arn.split("/").pop()}`,
          { role: role.name, policyArn: arn },
          child,
        ),
    );
    return { role, attachments };
  }

  /**
   * Resolves once the deploying identity (`sts:GetCallerIdentity`, read in preview too) is known not to be one of the
   * admin roles; fails the program, before any access entry is created, when it is (`creatorAdminEntry`).
   */
  private notTheCreator(adminRoleArns: readonly string[]): pulumi.Output<true> {
    return aws.getCallerIdentityOutput({}, { parent: this }).arn.apply((caller) => {
      // Unknown under preview mocks that answer the account only.
      const entry = caller ? creatorAdminEntry(adminRoleArns, caller) : undefined;
      if (entry) throw new pulumi.RunError(creatorAdminMessage(entry, caller));
      return true as const;
    });
  }

  /** One admin role's access entry (created once `checked` resolves) and its cluster-admin policy association. */
  private adminAccess(cluster: aws.eks.Cluster, arn: string, checked: pulumi.Output<true> | undefined): void {
    const role = arn.split("/").pop()!;
    const entry = new aws.eks.AccessEntry(
      `${this.name}-admin-${role}`,
      { clusterName: cluster.name, principalArn: checked ? checked.apply(() => arn) : arn, type: "STANDARD" },
      { parent: this },
    );
    new aws.eks.AccessPolicyAssociation(
      `${this.name}-admin-${role}-policy`,
      {
        clusterName: cluster.name,
        principalArn: arn,
        policyArn: "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
        accessScope: { type: "cluster" },
      },
      { parent: this, dependsOn: [entry] },
    );
  }

  /** An existing cluster, looked up by name: our nodes join through an access entry for their role. */
  private adopt(args: EksClusterArgs, c: ClusterConfig, nodeRole: aws.iam.Role): ClusterOutputs {
    const child = { parent: this };
    const existing = aws.eks.getClusterOutput({ name: c.name }, child);
    new aws.eks.AccessEntry(
      `${this.name}-node-access`,
      { clusterName: c.name, principalArn: nodeRole.arn, type: "EC2_LINUX" },
      child,
    );
    // Nodes go to the cluster's private subnets only (its subnet list may include public ones).
    const privateSubnets = aws.ec2.getSubnetsOutput(
      {
        filters: [
          { name: "subnet-id", values: existing.vpcConfig.subnetIds },
          { name: "map-public-ip-on-launch", values: ["false"] },
        ],
      },
      child,
    );
    const ca = firstOf(existing.certificateAuthorities, { data: "" }).apply((a) => a.data);
    return {
      clusterName: existing.name,
      nodeSubnetIds: privateSubnets.ids,
      vpcId: existing.vpcConfig.vpcId,
      clusterSecurityGroupId: existing.vpcConfig.clusterSecurityGroupId,
      // Undefined under mocks that echo inputs only; the autoscaler then warns.
      kubernetesVersion: pulumi.output(existing.version as pulumi.Output<string | undefined>),
      kubeconfig: kubeconfig(existing.name, existing.endpoint, ca, args.region),
      ready: [],
    };
  }

  /**
   * The managed add-ons that run Deployments (CoreDNS), created after `nodes` (the CPU node group): their create
   * waits for ACTIVE, which needs a node to run their pods. In-cluster releases wait for what this returns
   * (nothing resolves names before CoreDNS runs). Empty on an adopted cluster.
   */
  addNodeAddons(nodes: readonly pulumi.Resource[]): pulumi.Resource[] {
    return this.created ? this.managedAddons("afterCpuNodes", nodes) : [];
  }

  private managedAddons(stage: AddonStage, after: readonly pulumi.Resource[]): aws.eks.Addon[] {
    const cluster = this.created!;
    return addonsOfStage(stage).map((addon) => {
      const config = EKS_ADDON_CONFIG[addon];
      return new aws.eks.Addon(
        `${this.name}-${addon}`,
        {
          clusterName: cluster.name,
          addonName: addon,
          resolveConflictsOnCreate: "OVERWRITE",
          ...(config ? { configurationValues: JSON.stringify(config) } : {}),
        },
        { parent: this, dependsOn: [...after] },
      );
    });
  }
}
