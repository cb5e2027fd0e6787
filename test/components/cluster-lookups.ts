/**
 * The cluster lookups of a Pod Identity trust policy (`components/storage.ts`, `podIdentityTrust`) answered as AWS
 * would once the cluster exists, and the scoped conditions read back from a recorded role.
 */
import type { RecordedResource } from "../helpers/pulumi-mocks";
import type { CloudAnswers } from "./run-program";

export const ACCOUNT = "111122223333";

/** The ARN AWS gives a cluster of this name in us-east-1 of {@link ACCOUNT}. */
export const clusterArn = (clusterName: string) => `arn:aws:eks:us-east-1:${ACCOUNT}:cluster/${clusterName}`;

/** What the cluster and caller-identity lookups return. */
export const clusterLookups = (clusterName: string): CloudAnswers => ({
  "aws:eks/getCluster:getCluster": { arn: clusterArn(clusterName) },
  "aws:index/getCallerIdentity:getCallerIdentity": { accountId: ACCOUNT },
  "aws:index/getPartition:getPartition": { partition: "aws" },
});

/** The conditions a role scoped to one service account of the cluster (or any of several) carries. */
export const scopedTo = (clusterName: string, namespace: string, serviceAccount: string | readonly string[]) => ({
  "aws:SourceAccount": ACCOUNT,
  "aws:RequestTag/eks-cluster-arn": clusterArn(clusterName),
  "aws:RequestTag/kubernetes-namespace": namespace,
  "aws:RequestTag/kubernetes-service-account": serviceAccount,
});

/** The `StringEquals` conditions of each Pod Identity role (`{}` when unscoped), by resource name. */
export function podIdentityConditions(rs: readonly RecordedResource[]): Record<string, Record<string, unknown>> {
  const conditions: Record<string, Record<string, unknown>> = {};
  for (const r of rs.filter((x) => x.type === "aws:iam/role:Role")) {
    const doc = JSON.parse(r.inputs["assumeRolePolicy"] as string) as {
      Statement: { Principal: { Service?: string }; Condition?: { StringEquals: Record<string, unknown> } }[];
    };
    const [statement] = doc.Statement;
    if (statement?.Principal.Service === "pods.eks.amazonaws.com")
      conditions[r.name] = statement.Condition?.StringEquals ?? {};
  }
  return conditions;
}
