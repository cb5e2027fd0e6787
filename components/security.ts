/**
 * `WorkloadSecurity`: what isolates the workload namespace: its NetworkPolicies. Thin: the policies come from
 * `workloads/security/namespace.ts`, the same objects `ray-gpu render` writes. Each job's Ray token is KubeRay's own,
 * one per RayCluster (`RAY_AUTH` in workloads/security/pods.ts).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { namespacePolicies, type EgressOptions } from "../workloads/security/namespace";
import { MANAGED_BY } from "../workloads/k8s/labels";
import { childOptions } from "./child-options";

/** Arguments of {@link WorkloadSecurity}. */
export interface WorkloadSecurityArgs {
  /** The workload namespace (it must exist: pass it in `dependsOn`). */
  readonly namespace: string;
  /** What the namespace's pods may reach outside the cluster. */
  readonly egress: EgressOptions;
}

/** The NetworkPolicies of a workload namespace. */
export class WorkloadSecurity extends pulumi.ComponentResource {
  constructor(name: string, args: WorkloadSecurityArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:WorkloadSecurity", name, {}, opts);
    const child = childOptions(this, opts);
    for (const np of namespacePolicies(args.namespace, args.egress, MANAGED_BY)) {
      if (np.kind !== "NetworkPolicy") continue;
      new k8s.networking.v1.NetworkPolicy(
        `${name}-${np.metadata.name}`,
        { metadata: np.metadata, spec: np.spec },
        child,
      );
    }
    this.registerOutputs({});
  }
}
