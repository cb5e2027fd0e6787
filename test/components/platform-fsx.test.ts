import { describe, expect, it } from "vitest";
import { ofType, runProgram } from "./run-program";

describe("RayGpuPlatform with FSx for Lustre and admin roles", () => {
  it("links Lustre to the bucket and grants admins through access entries", async () => {
    const rs = await runProgram("prod", (config) => {
      const platform = JSON.parse(config["ray-gpu:platform"]!) as {
        cluster: Record<string, unknown>;
        storage: Record<string, unknown>;
      };
      platform.cluster["adminRoleArns"] = ["arn:aws:iam::123456789012:role/platform-admins"];
      platform.storage["fsx"] = { storageCapacityGiB: 2400, deploymentType: "PERSISTENT_2" };
      config["ray-gpu:platform"] = JSON.stringify(platform);
    });
    const fsx = ofType(rs, "aws:fsx/lustreFileSystem:LustreFileSystem")[0]!;
    expect(fsx.inputs).toMatchObject({
      storageCapacity: 2400,
      deploymentType: "PERSISTENT_2",
      perUnitStorageThroughput: 125,
    });
    expect(
      ofType(rs, "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")[0]!.inputs["dataRepositoryPath"],
    ).toMatch(/^s3:\/\/.+\/ray\/$/);
    const lustre = ofType(rs, "aws:ec2/securityGroup:SecurityGroup").find((g) => g.inputs["ingress"] !== undefined)!;
    const sg = lustre.inputs["ingress"] as { fromPort: number }[];
    expect(sg.map((i) => i.fromPort).sort((a, b) => a - b)).toEqual([988, 1018]);
    expect(ofType(rs, "aws:eks/accessEntry:AccessEntry")[0]!.inputs).toMatchObject({
      principalArn: "arn:aws:iam::123456789012:role/platform-admins",
      type: "STANDARD",
    });
    expect(ofType(rs, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")[0]!.inputs["policyArn"]).toBe(
      "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy",
    );
  });
});
