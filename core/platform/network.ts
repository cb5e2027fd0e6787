/**
 * The VPC of a new cluster: private subnets (nodes) and public subnets (NAT, load balancers) in each zone, NAT
 * gateways per environment, the subnet tags EKS and load balancers read, and an S3 gateway endpoint so dataset
 * and checkpoint traffic skips the NAT (gateway endpoints are free; NAT data processing is not).
 */
import type { NetworkConfig } from "../config/platform";
import type { Environment } from "../config/stack";
import { ENVIRONMENT_PROFILES } from "../environments";

/** The VPC of a new cluster, planned: CIDR, zones, subnets and their tags, NAT gateways, the S3 endpoint. */
export interface NetworkPlan {
  readonly cidrBlock: string;
  readonly availabilityZones: number;
  /** Exact zone names, when the config gives them. */
  readonly availabilityZoneNames: readonly string[] | undefined;
  readonly natGateways: "Single" | "OnePerAz";
  /** Subnet layout per zone, with the tags EKS and the AWS Load Balancer Controller discover subnets by. */
  readonly subnets: readonly {
    readonly type: "Public" | "Private";
    readonly cidrMask: number;
    readonly tags: Readonly<Record<string, string>>;
  }[];
  /** `com.amazonaws.<region>.s3`, a Gateway endpoint on every route table. */
  readonly s3EndpointService: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Plans the VPC for `clusterName` in `region`. */
export function planNetwork(
  cfg: NetworkConfig,
  environment: Environment,
  region: string,
  clusterName: string,
): NetworkPlan {
  const profile = ENVIRONMENT_PROFILES[environment].platform;
  const vpcMask = Number(cfg.cidrBlock.split("/")[1]);
  const cluster = { [`kubernetes.io/cluster/${clusterName}`]: "shared" };
  return {
    cidrBlock: cfg.cidrBlock,
    availabilityZones: cfg.availabilityZoneNames?.length ?? cfg.availabilityZones ?? profile.availabilityZones,
    availabilityZoneNames: cfg.availabilityZoneNames,
    natGateways: profile.natGateways,
    subnets: [
      // Private subnets hold every node and pod IP (VPC CNI): make them large. Public ones only NAT and LBs.
      {
        type: "Private",
        cidrMask: Math.min(vpcMask + 3, 28),
        tags: { ...cluster, "kubernetes.io/role/internal-elb": "1" },
      },
      { type: "Public", cidrMask: Math.min(vpcMask + 6, 28), tags: { ...cluster, "kubernetes.io/role/elb": "1" } },
    ],
    s3EndpointService: `com.amazonaws.${region}.s3`,
    tags: { ...cluster, "ray-gpu.io/environment": environment },
  };
}
