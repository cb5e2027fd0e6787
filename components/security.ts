/**
 * `WorkloadSecurity`: what isolates the workload namespace: the Ray cluster token (a random value kept secret in
 * Pulumi's state, stored in the Secret KubeRay hands to every Ray container) and the namespace's NetworkPolicies.
 * Thin: the policies come from `workloads/security/namespace.ts`, the same objects `ray-gpu render` writes.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import { namespacePolicies, type EgressOptions } from "../workloads/security/namespace";
import { RAY_AUTH_SECRET, RAY_AUTH_SECRET_KEY } from "../workloads/security/pods";
import { MANAGED_BY } from "../workloads/rayjob/render";
import { childOptions } from "./child-options";

/** Arguments of {@link WorkloadSecurity}. */
export interface WorkloadSecurityArgs {
  /** The workload namespace (it must exist: pass it in `dependsOn`). */
  readonly namespace: string;
  /** What the namespace's pods may reach outside the cluster. */
  readonly egress: EgressOptions;
}

/** The Ray token Secret and the NetworkPolicies of a workload namespace. */
export class WorkloadSecurity extends pulumi.ComponentResource {
  /** The Secret holding the Ray cluster token (`auth_token`); RayJobs name it in `authOptions.secretName`. */
  public readonly authSecret: k8s.core.v1.Secret;

  constructor(name: string, args: WorkloadSecurityArgs, opts?: pulumi.ComponentResourceOptions) {
    super("ray-gpu:index:WorkloadSecurity", name, {}, opts);
    const child = childOptions(this, opts);
    const token = new random.RandomPassword(`${name}-ray-token`, { length: 48, special: false }, { parent: this });
    this.authSecret = new k8s.core.v1.Secret(
      `${name}-ray-auth`,
      {
        metadata: { name: RAY_AUTH_SECRET, namespace: args.namespace, labels: { ...MANAGED_BY } },
        type: "Opaque",
        stringData: { [RAY_AUTH_SECRET_KEY]: token.result },
      },
      { ...child, additionalSecretOutputs: ["stringData", "data"] },
    );
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
