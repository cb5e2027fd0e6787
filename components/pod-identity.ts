/** The trust policy every Pod Identity role of the platform takes, scoped to one service account of one cluster. */
import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { podIdentityTrustPolicy } from "../core/platform/iam";

/**
 * The trust policy of a role EKS Pod Identity may hand only to `serviceAccount`'s pods on this cluster, in this account
 * (`podIdentityTrustPolicy`). The cluster's ARN and the account are looked up once the cluster exists; until then (a
 * preview of a new cluster) the policy shows as unknown.
 */
export function podIdentityTrust(
  clusterName: pulumi.Input<string>,
  serviceAccount: { readonly namespace: string; readonly name: string },
  parent: pulumi.Resource,
): pulumi.Output<string> {
  const clusterArn = aws.eks.getClusterOutput({ name: clusterName }, { parent }).arn;
  const accountId = aws.getCallerIdentityOutput({}, { parent }).accountId;
  const { namespace, name } = serviceAccount;
  return pulumi
    .all([clusterArn, accountId])
    .apply(([arn, account]) =>
      JSON.stringify(podIdentityTrustPolicy({ accountId: account, clusterArn: arn, namespace, serviceAccount: name })),
    );
}
