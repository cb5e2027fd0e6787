/**
 * An importer's EFA node group: `GpuNodeGroup` alone, outside the platform, makes its own placement group and EFA
 * security group when given none, puts the interfaces in the cluster's group and the EFA one, and refuses an EFA plan
 * without the cluster's security group (EKS would leave it off the nodes) instead of deploying nodes that cannot join.
 */
import { describe, expect, it } from "vitest";
import { GpuNodeGroup } from "../../components/node-group";
import { parsePlatformConfig } from "../../core/config/stack";
import { planGpuNodeGroup } from "../../core/platform/node-groups";
import { planPools } from "../../core/pools";
import { settlePreview, setupPulumiMocks } from "../helpers/pulumi-mocks";

const plan = planGpuNodeGroup(
  planPools(
    parsePlatformConfig({
      cluster: { mode: "existing", name: "my-eks" },
      gpuNodeGroups: [
        { name: "efa", instanceType: "g5.48xlarge", maxNodes: 4, efa: true, availabilityZone: "us-east-1a" },
      ],
    }),
  ).gpu[0]!,
  { clusterName: "my-eks", environment: "prod" },
);
const args = {
  plan,
  clusterName: "my-eks",
  nodeRoleArn: "arn:aws:iam::123456789012:role/my-eks-nodes",
  subnetIds: ["subnet-0a", "subnet-0b"],
  vpcId: "vpc-0123",
};

describe("GpuNodeGroup with an EFA plan, imported alone", () => {
  it("makes its own placement group and EFA group, and puts its interface in the cluster's group and the EFA one", async () => {
    const rs = await setupPulumiMocks({}, "prod");
    new GpuNodeGroup("efa", { ...args, clusterSecurityGroupId: "sg-cluster" });
    await settlePreview();
    const types = rs.map((r) => r.type);
    expect(types.filter((t) => t === "aws:ec2/placementGroup:PlacementGroup")).toHaveLength(1);
    const lt = rs.find((r) => r.type === "aws:ec2/launchTemplate:LaunchTemplate")!;
    expect(lt.inputs["networkInterfaces"]).toEqual([
      expect.objectContaining({ interfaceType: "efa", securityGroups: ["sg-cluster", "<computed: id of efa-efa>"] }),
    ]);
    const group = rs.find((r) => r.type === "aws:ec2/securityGroup:SecurityGroup")!;
    expect(group.inputs["vpcId"]).toBe("vpc-0123");
  });

  it("refuses to make an EFA group without the cluster's security group, saying where to get it", () => {
    expect(() => new GpuNodeGroup("efa-no-sg", args)).toThrow(
      /GpuNodeGroup efa-no-sg: an EFA node group needs clusterSecurityGroupId \(EksCluster\.clusterSecurityGroupId\)/,
    );
  });
});
