/** What a Ray cluster is rendered from: the planned shape and what its containers run and read. */
import type { ClusterShapePlan } from "../../core/cluster/shape";
import type { ContractMounts } from "../contract/configmaps";
import type { SecretRef } from "../security/secrets";

/** Input of a Ray cluster's head and worker groups, whichever Ray resource holds them. */
export interface RayClusterInput {
  /** The container image, with Ray and the job's code. */
  readonly image: string;
  readonly shape: ClusterShapePlan;
  /** User environment variables; tuned values win on a clash. @default - none */
  readonly userEnv?: Readonly<Record<string, string>>;
  /** Secret user variables, rendered as `secretKeyRef`. @default - none */
  readonly secretEnv?: Readonly<Record<string, SecretRef>>;
  /** Service account of the Ray pods (bound to the bucket's IAM role). */
  readonly serviceAccountName: string;
  /** The planner's knobs, handed to the user's code on every Ray container as `RAY_GPU_*` variables. @default - none */
  readonly knobs?: object;
  /** The tuning document and the runtime package, mounted on every Ray container. @default - none */
  readonly contract?: ContractMounts;
}
