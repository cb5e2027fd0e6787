/** The trust policy every Pod Identity role of the platform takes, scoped to one service account of one cluster. */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { podIdentityTrustPolicy } from "../core/platform/iam";

/**
 * The trust policy of a role EKS Pod Identity may hand only to `serviceAccount`'s pods on this cluster, in this account
 * (`podIdentityTrustPolicy`). The cluster's ARN and the account are looked up once the cluster exists; until then (a
 * preview of a new cluster) the policy shows as unknown.
 */
export function podIdentityTrust(
  clusterName: pulumi.Input<string>,
  serviceAccount: { readonly namespace: string; readonly name: string | readonly string[] },
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

/** What {@link boundServiceAccounts} binds: service accounts of one namespace, each to one role. */
export interface ServiceAccountBinding {
  readonly clusterName: pulumi.Input<string>;
  readonly namespace: string;
  readonly names: readonly string[];
  readonly roleArn: pulumi.Input<string>;
}

/**
 * Service accounts bound to a role through EKS Pod Identity: for each name, the ServiceAccount (no API token mounted:
 * no Ray pod calls the Kubernetes API, and Pod Identity mounts its own token) and its association. Children are named
 * `<name>-sa-<account>` and `<name>-identity-<account>`.
 */
export function boundServiceAccounts(
  name: string,
  binding: ServiceAccountBinding,
  parent: pulumi.Resource,
  inNamespace: pulumi.CustomResourceOptions,
): k8s.core.v1.ServiceAccount[] {
  return binding.names.map((account) => {
    new aws.eks.PodIdentityAssociation(
      `${name}-identity-${account}`,
      {
        clusterName: binding.clusterName,
        namespace: binding.namespace,
        serviceAccount: account,
        roleArn: binding.roleArn,
      },
      { parent },
    );
    return new k8s.core.v1.ServiceAccount(
      `${name}-sa-${account}`,
      { metadata: { name: account, namespace: binding.namespace }, automountServiceAccountToken: false },
      inNamespace,
    );
  });
}
