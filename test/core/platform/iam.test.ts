/**
 * The Pod Identity trust policy: AWS's minimal policy when unscoped; scoped, it lets EKS Pod Identity take the role only
 * for a request from the account, with the session tags of one service account of one cluster.
 */
import { describe, expect, it } from "vitest";
import { podIdentityTrustPolicy } from "../../../core/platform/iam";

const SCOPE = {
  accountId: "111122223333",
  clusterArn: "arn:aws:eks:us-east-1:111122223333:cluster/ray-gpu-prod",
  namespace: "ray-jobs",
  serviceAccount: "ray-workloads",
};

describe("podIdentityTrustPolicy", () => {
  it("trusts EKS Pod Identity to assume the role and tag its session, with no condition when unscoped", () => {
    expect(podIdentityTrustPolicy()).toEqual({
      Version: "2012-10-17",
      Statement: [
        {
          Effect: "Allow",
          Principal: { Service: "pods.eks.amazonaws.com" },
          Action: ["sts:AssumeRole", "sts:TagSession"],
        },
      ],
    });
  });

  it("scoped, requires the source account and the session tags of the cluster, namespace and service account", () => {
    const [statement] = podIdentityTrustPolicy(SCOPE).Statement;
    expect(statement).toMatchObject({
      Principal: { Service: "pods.eks.amazonaws.com" },
      Action: ["sts:AssumeRole", "sts:TagSession"],
    });
    expect(statement!.Condition).toEqual({
      StringEquals: {
        "aws:SourceAccount": "111122223333",
        "aws:RequestTag/eks-cluster-arn": "arn:aws:eks:us-east-1:111122223333:cluster/ray-gpu-prod",
        "aws:RequestTag/kubernetes-namespace": "ray-jobs",
        "aws:RequestTag/kubernetes-service-account": "ray-workloads",
      },
    });
  });
});
