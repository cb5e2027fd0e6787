/**
 * Schema of `ray-gpu:platform`: the EKS cluster, the CPU pool for Ray heads and system pods, the A10G GPU pools
 * and storage. Defaults live here (zod `.default()`), in one place; every optional field documents its default.
 */
import { z } from "zod";
import { ObservabilitySchema } from "./observability";
import { CPU_INSTANCE_TYPES, GPU_INSTANCE_TYPES } from "../catalog/instances";
import {
  BucketNameSchema,
  cidrSchema,
  KubernetesVersionSchema,
  VpcCidrSchema,
  WorkloadNamespaceSchema,
} from "./aws-rules";
import { cidrRange } from "./address-set";
import { distinctEntries } from "./distinct";
import { grammar, GRAMMARS } from "./grammars";
import { GPU_CAPACITY_TYPES, MAX_FALLBACK_INSTANCE_TYPES, SPOT_WAIT_MINUTES } from "./gpu-capacity";

/** The IPv4 range of every address: the default of the public API endpoint's and the pods' HTTPS egress ranges. */
export const EVERY_ADDRESS = "0.0.0.0/0";

/**
 * A Kubernetes-label-safe name: lowercase letters, digits and '-', starting with a letter.
 * @internal
 */
export const dnsLabel = (max: number) =>
  z.string().max(max).regex(GRAMMARS.rfc1035Label.pattern, GRAMMARS.rfc1035Label.rule);

/**
 * The longest pool name: EKS names a pool's node group `<name>-` plus the AWS provider's 26-character unique suffix, at
 * most 63 characters in all (hashicorp/terraform-provider-aws `internal/service/eks/node_group.go`,
 * `node_group_name_prefix`).
 */
export const MAX_POOL_NAME = 63 - 26 - 1;

/** Kubernetes version of a new EKS cluster. Pinned; bump deliberately. */
export const DEFAULT_KUBERNETES_VERSION = "1.36";

const CIDR = cidrSchema();

/**
 * How the stack gets its EKS cluster.
 * @internal
 */
export const ClusterSchema = z.discriminatedUnion("mode", [
  z.strictObject({
    /** Create a new EKS control plane. */
    mode: z.literal("create"),
    /** EKS cluster name. */
    name: grammar("eksClusterName"),
    /**
     * Kubernetes minor version. 1.36 is in EKS standard support until 2027-08-02; the cluster is set to upgrade
     * when standard support ends rather than pay for extended support.
     * @default "1.36"
     */
    kubernetesVersion: KubernetesVersionSchema.default(DEFAULT_KUBERNETES_VERSION),
    /**
     * IAM role ARNs granted cluster admin through EKS access entries (the stack's own identity always is).
     * @default []
     */
    adminRoleArns: z
      .array(grammar("iamRoleArn"))
      .superRefine(distinctEntries("each role becomes one EKS access entry, and a principal can have only one"))
      .default([]),
    /**
     * Expose the Kubernetes API endpoint publicly (it is always reachable from inside the VPC).
     * @default true
     */
    publicEndpoint: z.boolean().default(true),
    /**
     * Addresses that may reach the public API endpoint. A prod stack with a public endpoint must narrow it.
     * @default ["0.0.0.0/0"]
     */
    publicAccessCidrs: z
      .array(CIDR)
      .min(1)
      .superRefine(distinctEntries("a range given twice admits nothing more; give each once"))
      .default([EVERY_ADDRESS]),
  }),
  z.strictObject({
    /** Adopt an existing EKS cluster by name; only node groups, add-ons and workloads are created. */
    mode: z.literal("existing"),
    /** Name of the existing EKS cluster. */
    name: grammar("eksClusterName"),
  }),
]);

/**
 * Override of what DaemonSets take from each node before Ray pods are sized.
 * @internal
 */
export const DaemonSetReserveSchema = z.strictObject({
  /** CPU held back per node, in millicores. */
  cpuMillis: z.number().int().min(0).max(8000),
  /** Memory held back per node, in MiB. */
  memoryMiB: z.number().int().min(0).max(65536),
});

/**
 * The on-demand CPU pool that runs Ray heads, the KubeRay operator and system pods.
 * @internal
 */
export const CpuNodeGroupSchema = z.strictObject({
  /**
   * Pool name; nodes carry the label `ray-gpu.io/pool=<name>`.
   * @default "system"
   */
  name: dnsLabel(MAX_POOL_NAME).default("system"),
  /**
   * m6i or m7i size.
   * @default "m6i.2xlarge"
   */
  instanceType: z.enum(CPU_INSTANCE_TYPES).default("m6i.2xlarge"),
  /**
   * Fewest nodes (the pool never scales to zero: the operator lives here).
   * @default 2
   */
  minNodes: z.number().int().min(1).max(100).default(2),
  /**
   * Most nodes.
   * @default 4
   */
  maxNodes: z.number().int().min(1).max(100).default(4),
  /**
   * What DaemonSets take from each node.
   * @default - the sum of the known DaemonSet requests plus headroom (see core/catalog/daemonsets.ts)
   */
  daemonSetReserve: DaemonSetReserveSchema.optional(),
});

export {
  GPU_CAPACITY_TYPES,
  SPOT_WAIT_MINUTES,
  SPOT_GROUP_SUFFIX,
  spotGroupName,
  MAX_FALLBACK_INSTANCE_TYPES,
  fallbackGroupName,
  type GpuCapacityType,
} from "./gpu-capacity";

/**
 * A GPU pool: g5 (A10G), g6 (L4) or g6e (L40S) nodes, with fallback sizes in order.
 * @internal
 */
export const GpuNodeGroupSchema = z.strictObject({
  /**
   * Pool name; nodes carry `ray-gpu.io/pool=<name>` and RayJob workers select on it. At most 36 characters (31 for a
   * spot-with-fallback pool, whose spot group is `<name>-spot`).
   */
  name: dnsLabel(MAX_POOL_NAME),
  /** A GPU size of the catalog: g5 (A10G), g6 (L4) or g6e (L40S), `xlarge` to `48xlarge`. */
  instanceType: z.enum(GPU_INSTANCE_TYPES),
  /**
   * GPU sizes to fall back to, in order, when EC2 has no `instanceType` capacity to give: one node group per size,
   * scaled by the Cluster Autoscaler's priority expander only after the groups before it could not be (see
   * `core/platform/spot-fallback.ts`); Kueue admits the pool's jobs on any of them (one flavor). Each must have as
   * many GPUs per node as `instanceType`, differ from it and from each other, and needs queueing on. Jobs on the pool
   * are planned on the smallest node of all the sizes, and to fit in the GPU memory of each: prod refuses a size a job
   * would not fit, dev plans the job on `instanceType` and warns. At most 3.
   * @default [] (no fallback)
   */
  fallbackInstanceTypes: z.array(z.enum(GPU_INSTANCE_TYPES)).max(MAX_FALLBACK_INSTANCE_TYPES).default([]),
  /**
   * Fewest nodes; 0 lets the pool scale to zero when no RayJob needs it.
   * @default 0
   */
  minNodes: z.number().int().min(0).max(1000).default(0),
  /** Most nodes. */
  maxNodes: z.number().int().min(1).max(1000),
  /**
   * EC2 capacity type. `spot` is allowed in dev only. `spot-with-fallback` makes two node groups for the pool, spot
   * (preferred) and on-demand (from 0 nodes), and the Cluster Autoscaler adds on-demand nodes when spot has none to
   * give within `spotWaitMinutes`; allowed in every environment, with queueing on.
   * @default "on-demand"
   */
  capacityType: z.enum(GPU_CAPACITY_TYPES).default("on-demand"),
  /**
   * With `capacityType: spot-with-fallback`: the longest the Cluster Autoscaler waits for a spot node it asked for
   * before it gives up on the spot group and starts an on-demand node instead (its `--max-node-provision-time`, one
   * value for the whole cluster, so every spot-with-fallback pool must give the same). When EC2 reports that it has no
   * spot capacity, the autoscaler moves on within a minute or two without waiting this long. 5-10.
   * @default 10 with `spot-with-fallback`; not allowed with the other capacity types
   */
  spotWaitMinutes: z.number().int().min(SPOT_WAIT_MINUTES.min).max(SPOT_WAIT_MINUTES.max).optional(),
  /**
   * One availability zone for the whole pool (multi-node training wants nodes close together).
   * @default - any zone of the VPC's private subnets
   */
  availabilityZone: grammar("availabilityZone").optional(),
  /**
   * Give NCCL the nodes' EFA interfaces (every size of the pool must have one: g5 8xlarge and larger): the launch
   * template attaches them, the EFA device plugin offers them to pods, the nodes reserve hugepages, and the jobs' workers
   * request both and run NCCL over libfabric's EFA provider (their image needs aws-ofi-nccl; see docs/platform.md,
   * "EFA"). EFA's OS-bypass traffic stays in one subnet, so the pool needs `availabilityZone`, and its nodes launch in
   * one cluster placement group. Without EFA NCCL uses TCP sockets over ENA.
   * @default false
   */
  efa: z.boolean().default(false),
  /**
   * Launch the pool's nodes in one cluster placement group (lowest latency between nodes, for multi-node training).
   * Needs `availabilityZone`; an EFA pool always has one.
   * @default true with `efa`, else false
   */
  clusterPlacementGroup: z.boolean().optional(),
  /**
   * Root EBS volume (gp3) in GiB: ML images are large, and containerd unpacks them here unless NVMe is used.
   * @default 200
   */
  rootVolumeGiB: z.number().int().min(50).max(16384).default(200),
  /**
   * What DaemonSets take from each node.
   * @default - the sum of the known DaemonSet requests plus headroom (see core/catalog/daemonsets.ts)
   */
  daemonSetReserve: DaemonSetReserveSchema.optional(),
});

/**
 * The S3 bucket for datasets, checkpoints and results.
 * @internal
 */
export const StorageSchema = z.strictObject({
  /**
   * Bucket name.
   * @default - generated by Pulumi from the stack name
   */
  bucketName: BucketNameSchema.optional(),
  /**
   * Key prefix Ray pods may read and write.
   * @default "" (the whole bucket)
   */
  prefix: grammar("s3KeyPrefix").default(""),
  /**
   * Days before non-current checkpoint objects expire.
   * @default 30
   */
  checkpointRetentionDays: z.number().int().min(1).max(3650).default(30),
  /**
   * FSx for Lustre linked to the bucket, for training that reads the same data every epoch.
   * @default - none
   */
  fsx: z
    .strictObject({
      /** Capacity in GiB: 1200, 2400, or a multiple of 2400 (SCRATCH_2 / PERSISTENT_2 rules). */
      storageCapacityGiB: z
        .number()
        .int()
        .refine((n) => n === 1200 || (n >= 2400 && n % 2400 === 0), "must be 1200, 2400 or a multiple of 2400"),
      /**
       * SCRATCH_2 (no replication, cheapest) or PERSISTENT_2.
       * @default "SCRATCH_2"
       */
      deploymentType: z.enum(["SCRATCH_2", "PERSISTENT_2"]).default("SCRATCH_2"),
    })
    .optional(),
});

/**
 * The VPC of a new cluster.
 * @internal
 */
export const NetworkSchema = z.strictObject({
  /**
   * VPC CIDR block.
   * @default "10.0.0.0/16"
   */
  cidrBlock: VpcCidrSchema.default("10.0.0.0/16"),
  /**
   * Availability zones with private subnets.
   * @default - the environment's (dev 2, prod 3)
   */
  availabilityZones: z.number().int().min(2).max(6).optional(),
  /**
   * Exact zones for the subnets (needed when a GPU pool pins `availabilityZone`, so the VPC has a subnet there).
   * @default - the first `availabilityZones` zones of the region
   */
  availabilityZoneNames: z
    .array(grammar("availabilityZone"))
    .min(2)
    .max(6)
    .superRefine(
      distinctEntries(
        "the VPC makes one private subnet per zone, and EKS needs subnets in at least two different zones",
      ),
    )
    .optional(),
});

/** Link-local 169.254.0.0/16: the instance metadata service (169.254.169.254) and the Pod Identity agent live there. */
const LINK_LOCAL = cidrRange("169.254.0.0/16")!;

/**
 * Each HTTPS egress range reaches something outside link-local: a range inside 169.254.0.0/16 can only name the
 * metadata service, which the policy always cuts out of a wider range and which a range of its own alone would open
 * (a /32 cannot be cut from itself), or the Pod Identity agent, which is always allowed on its own port.
 */
function outsideLinkLocal(cidrs: readonly string[], ctx: z.RefinementCtx): void {
  cidrs.forEach((cidr, i) => {
    const range = cidrRange(cidr);
    if (range && range.first >= LINK_LOCAL.first && range.last <= LINK_LOCAL.last)
      ctx.addIssue({
        code: "custom",
        path: [i],
        message:
          "is inside link-local 169.254.0.0/16, where the only HTTPS endpoint is the instance metadata service; pods " +
          "get AWS credentials from EKS Pod Identity (always allowed), never from it: give ranges outside 169.254.0.0/16",
      });
  });
}

/**
 * What the workload namespace's pods may reach outside the cluster (see docs/security.md).
 * @internal
 */
export const SecuritySchema = z.strictObject({
  /**
   * CIDRs Ray pods may reach on TCP 443: S3, package mirrors, model hubs. The instance metadata service is
   * excluded; DNS and the EKS Pod Identity agent are always allowed.
   * @default ["0.0.0.0/0"]
   */
  httpsEgressCidrs: z
    .array(CIDR)
    .min(1)
    .superRefine(distinctEntries("a range given twice allows nothing more; give each once"))
    .superRefine(outsideLinkLocal)
    .default([EVERY_ADDRESS]),
});

/**
 * Job queueing (Kueue): jobs that do not fit the pools together wait for quota instead of failing a deadline.
 * @internal
 */
export const QueueingSchema = z.strictObject({
  /**
   * Install Kueue and submit every RayJob through the stack's queue, with quotas from each pool's `maxNodes`. Kueue
   * needs `shutdownAfterJobFinishes`, so with it prod deletes a failed job's cluster at once (the driver log stays
   * with the submitter Job); without it prod keeps a failed head for an hour, and jobs that do not fit together fail
   * their pre-running deadline instead of waiting.
   * @default true
   */
  enabled: z.boolean().default(true),
});

/**
 * Everything under `ray-gpu:platform`.
 * @internal
 */
export const PlatformSchema = z.strictObject({
  /** The EKS cluster: create one, or adopt an existing one by name. */
  cluster: ClusterSchema,
  /**
   * The VPC, when the cluster is created (ignored when adopting: node groups use the cluster's subnets).
   * @default - 10.0.0.0/16 over the environment's zones
   */
  network: NetworkSchema.prefault({}),
  /**
   * Namespace the RayJobs run in.
   * @default "ray-jobs"
   */
  workloadNamespace: WorkloadNamespaceSchema.default("ray-jobs"),
  /**
   * The CPU pool for Ray heads and system pods.
   * @default - m6i.2xlarge, 2 to 4 nodes
   */
  cpuNodeGroup: CpuNodeGroupSchema.prefault({}),
  /** One or more A10G pools. */
  gpuNodeGroups: z.array(GpuNodeGroupSchema).min(1),
  /**
   * The S3 bucket.
   * @default - a generated bucket name, whole-bucket access, 30-day checkpoint retention
   */
  storage: StorageSchema.prefault({}),
  /**
   * Network isolation of the workload namespace.
   * @default - HTTPS to anywhere but the instance metadata service
   */
  security: SecuritySchema.prefault({}),
  /**
   * Job queueing with Kueue.
   * @default - on
   */
  queueing: QueueingSchema.prefault({}),
  /**
   * GPU and Ray metrics, alert rules and dashboards.
   * @default - on: DCGM exporter, Prometheus and Grafana in the cluster, 15 days, 50 GiB
   */
  observability: ObservabilitySchema.prefault({}),
});

// The plain types of these schemas, generated from them (scripts/public-types): the public API's, without zod.
export type {
  ClusterConfig,
  CpuNodeGroupConfig,
  GpuNodeGroupConfig,
  NetworkConfig,
  PlatformConfig,
  StorageConfig,
} from "./types";
