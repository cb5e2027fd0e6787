/**
 * What `pulumi destroy` leaves behind or blocks on, for the platform a stack plans: data kept on purpose, and what
 * controllers inside the cluster made that Pulumi never tracked. `ray-gpu plan` lists it. Pure.
 *
 * Sources:
 * - a StatefulSet keeps its PersistentVolumeClaims unless `persistentVolumeClaimRetentionPolicy.whenDeleted` is
 *   `Delete` (Kubernetes "StatefulSets", PersistentVolumeClaim retention; GA in 1.32); the Prometheus Operator copies
 *   the Prometheus resource's policy to the StatefulSet it makes (prometheus-operator v0.93
 *   pkg/prometheus/server/statefulset.go), and kube-prometheus-stack 88.5.3 passes
 *   `prometheus.prometheusSpec.persistentVolumeClaimRetentionPolicy` through (templates/prometheus/prometheus.yaml);
 * - a claim's EBS volume goes with it only if its StorageClass's `reclaimPolicy` is `Delete` and the EBS CSI
 *   controller still runs to delete it; the driver tags each volume `kubernetes.io/created-for/pvc/namespace`
 *   (kubernetes-sigs/aws-ebs-csi-driver pkg/cloud, `PVCNamespaceTag`);
 * - EC2 refuses to delete a subnet or VPC that still holds a network interface (`DependencyViolation`): a load balancer
 *   made for a Service of type LoadBalancer, or an interface the VPC CNI left when its node was cut off.
 */
import type { ObservabilityPlan } from "../observability/charts";

/** What the leftovers follow from: the parts of the platform's plan (`./plan.ts`) they read. */
export interface PlatformFacts {
  readonly region: string;
  readonly observability: Pick<ObservabilityPlan, "namespace" | "storageGiB" | "storageClass"> | undefined;
  /** The new VPC's plan; undefined when an existing cluster is adopted. */
  readonly network: object | undefined;
  readonly security: { readonly protectData: boolean };
}

/** One thing `pulumi destroy` leaves or blocks on: what, why, and how to find or avoid it. */
export interface DestroyLeftover {
  readonly what: string;
  readonly why: string;
  readonly check: string;
}

/** Prometheus's volume: deleted with its StatefulSet when the driver still runs, else left "available". */
function prometheusVolume(p: PlatformFacts, region: string): DestroyLeftover[] {
  const o = p.observability;
  if (!o) return [];
  const className = o.storageClass ?? "the cluster's default StorageClass";
  return [
    {
      what: `Prometheus's ${o.storageGiB} GiB EBS volume (claim in namespace ${o.namespace}, class ${className})`,
      why:
        "its claim is deleted with the Prometheus StatefulSet (retention policy whenDeleted: Delete) and the volume " +
        `with the claim${o.storageClass ? "" : " if that class's reclaimPolicy is Delete"}, but only while the EBS ` +
        "CSI controller still runs: pulumi destroy removes the release and then the driver without waiting for it",
      check:
        `aws ec2 describe-volumes --region ${region} --filters ` +
        `Name=tag:kubernetes.io/created-for/pvc/namespace,Values=${o.namespace} Name=status,Values=available`,
    },
  ];
}

/** The new VPC: a network interface left in it blocks its subnets' deletion. */
function networkInterfaces(p: PlatformFacts, region: string): DestroyLeftover[] {
  if (!p.network) return [];
  return [
    {
      what: "network interfaces in the stack's VPC",
      why:
        "a load balancer made for a Service of type LoadBalancer (not made by the stack; delete such Services " +
        "first), or an interface the VPC CNI left behind, makes EC2 refuse to delete the subnets and the VPC " +
        "(DependencyViolation) and pulumi destroy stops there",
      check:
        `aws ec2 describe-network-interfaces --region ${region} --filters Name=vpc-id,Values=<the stack's vpcId ` +
        "output>, then delete the load balancer or the detached interface it names",
    },
  ];
}

/** The bucket and key of an environment that keeps its data. */
function keptData(p: PlatformFacts): DestroyLeftover[] {
  if (!p.security.protectData) return [];
  return [
    {
      what: "the bucket and the KMS key",
      why:
        "kept on purpose (protect and retainOnDelete): pulumi destroy stops with an error naming them until they " +
        "are unprotected, and then drops them from the state but leaves them in AWS",
      check:
        "pulumi state unprotect --all, then pulumi destroy; delete the bucket (after emptying it) and schedule the " +
        "key's deletion yourself if the data may go",
    },
  ];
}

/** Everything `pulumi destroy` leaves or blocks on for this platform, in the order destroy meets them. */
export function destroyLeftovers(p: PlatformFacts): DestroyLeftover[] {
  return [...prometheusVolume(p, p.region), ...networkInterfaces(p, p.region), ...keptData(p)];
}
