/** An admin role that is the identity deploying the cluster: EKS already gave it an access entry. */
import { describe, expect, it } from "vitest";
import { creatorAdminEntry, creatorAdminMessage } from "../../../core/platform/iam";

const SSO = "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_Admin_1f9f";

describe("creatorAdminEntry", () => {
  it("finds the entry naming the deploying role, from its session ARN, with or without the role's path", () => {
    const session = "arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Admin_1f9f/alice@example.com";
    expect(creatorAdminEntry(["arn:aws:iam::123456789012:role/ci", SSO], session)).toBe(SSO);
    const bare = "arn:aws:iam::123456789012:role/AWSReservedSSO_Admin_1f9f";
    expect(creatorAdminEntry([bare], session)).toBe(bare);
    expect(creatorAdminEntry([bare], SSO)).toBe(bare);
  });

  it("passes other roles, the same name in another account, and an IAM user", () => {
    const session = "arn:aws:sts::123456789012:assumed-role/deployer/ci-run-7";
    expect(creatorAdminEntry(["arn:aws:iam::123456789012:role/platform-admins"], session)).toBeUndefined();
    expect(creatorAdminEntry(["arn:aws:iam::210987654321:role/deployer"], session)).toBeUndefined();
    expect(creatorAdminEntry([SSO], "arn:aws:iam::123456789012:user/alice")).toBeUndefined();
  });

  it("says which entry, who runs pulumi, and the fix", () => {
    expect(creatorAdminMessage("arn:aws:iam::1:role/x", "arn:aws:sts::1:assumed-role/x/s")).toBe(
      "ray-gpu:platform.cluster.adminRoleArns: arn:aws:iam::1:role/x is the identity running pulumi " +
        "(arn:aws:sts::1:assumed-role/x/s); EKS already gives the cluster's creator an access entry with cluster " +
        "admin, and creating a second one fails (ResourceInUseException) once the cluster exists: drop it from " +
        "adminRoleArns, or deploy as another identity",
    );
  });
});
