/** `Network`: the VPC of a new cluster, through awsx, over the pure plan in `core/platform/network.ts`. */
import * as awsx from "@pulumi/awsx";
import * as pulumi from "@pulumi/pulumi";
import type { NetworkPlan } from "../core/platform/network";
import { listOf } from "./outputs";

/** Arguments of `Network`. */
export interface NetworkArgs {
  /** From `planNetwork(...)`. */
  readonly plan: NetworkPlan;
}

/** The VPC of a new cluster (awsx): private and public subnets, NAT gateways, an S3 gateway endpoint. */
export class Network extends pulumi.ComponentResource {
  public readonly vpcId: pulumi.Output<string>;
  public readonly privateSubnetIds: pulumi.Output<string[]>;
  public readonly publicSubnetIds: pulumi.Output<string[]>;

  constructor(name: string, args: NetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:Network", name, {}, opts);
    const p = args.plan;
    const vpc = new awsx.ec2.Vpc(
      `${name}-vpc`,
      {
        cidrBlock: p.cidrBlock,
        ...(p.availabilityZoneNames
          ? { availabilityZoneNames: [...p.availabilityZoneNames] }
          : { numberOfAvailabilityZones: p.availabilityZones }),
        enableDnsHostnames: true,
        enableDnsSupport: true,
        natGateways: { strategy: p.natGateways },
        subnetStrategy: "Auto",
        subnetSpecs: p.subnets.map((s) => ({ type: s.type, cidrMask: s.cidrMask, tags: { ...s.tags } })),
        // Gateway endpoint on every route table of the VPC ("Auto" fills the route tables it created).
        vpcEndpointStrategy: "Auto",
        vpcEndpointSpecs: [{ serviceName: p.s3EndpointService, vpcEndpointType: "Gateway" }],
        tags: { ...p.tags },
      },
      { parent: this },
    );
    this.vpcId = vpc.vpcId;
    this.privateSubnetIds = listOf(vpc.privateSubnetIds);
    this.publicSubnetIds = listOf(vpc.publicSubnetIds);
    this.registerOutputs({
      vpcId: this.vpcId,
      privateSubnetIds: this.privateSubnetIds,
      publicSubnetIds: this.publicSubnetIds,
    });
  }
}
