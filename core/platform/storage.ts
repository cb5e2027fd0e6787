/**
 * The S3 bucket for datasets, checkpoints and results: encrypted, versioned, public access blocked, TLS only,
 * old checkpoint versions expired; Ray pods reach it through one Kubernetes service account bound (EKS Pod
 * Identity) to a role that may use only this bucket or its prefix. Optional FSx for Lustre linked to the bucket.
 */
import type { StorageConfig } from "../config/platform";
import type { Environment } from "../config/stack";
import { ENVIRONMENT_PROFILES } from "../environments";

/**
 * The stack's own service account, bound to the bucket role like each job's: a job given it (a TypeScript caller's
 * `serviceAccountName`) writes under `checkpoints/ray-workloads/` and `results/ray-workloads/`.
 */
export const RAY_SERVICE_ACCOUNT = "ray-workloads";

/**
 * The service account a job's Ray pods run as: one per job, named after it, so EKS Pod Identity's
 * `kubernetes-service-account` session tag names the job, and the bucket role lets it write and delete under its own
 * `checkpoints/<job>/` and `results/<job>/` only (core/platform/iam.ts `bucketAccessPolicy`).
 */
export const jobServiceAccount = (workload: string): string => workload;
/** ConfigMap the platform creates in the workload namespace with the bucket's name; RayJobs read it (optional). */
export const STORAGE_CONFIGMAP = "ray-gpu-storage";

/** The bucket, its lifecycle, the Ray pods' service account and optional FSx, planned. */
export interface StoragePlan {
  readonly bucketName: string | undefined;
  readonly prefix: string;
  readonly forceDestroy: boolean;
  /** Prefix of Ray Train checkpoints, whose noncurrent versions expire. */
  readonly checkpointPrefix: string;
  readonly checkpointRetentionDays: number;
  readonly abortIncompleteUploadDays: number;
  readonly serviceAccount: { readonly namespace: string; readonly name: string };
  /** One service account per workload of the stack (`jobServiceAccount`: its name), each bound to the bucket role. */
  readonly jobServiceAccounts: readonly string[];
  readonly fsx:
    | {
        readonly storageCapacityGiB: number;
        readonly deploymentType: "SCRATCH_2" | "PERSISTENT_2";
        readonly importPath: string;
      }
    | undefined;
}

/**
 * Plans storage for the workload namespace.
 * @param workloads - the stack's workload names, each of which gets its own service account. @default []
 */
export function planStorage(
  cfg: StorageConfig,
  environment: Environment,
  workloadNamespace: string,
  workloads: readonly string[] = [],
): StoragePlan {
  return {
    bucketName: cfg.bucketName,
    prefix: cfg.prefix,
    forceDestroy: ENVIRONMENT_PROFILES[environment].platform.bucketForceDestroy,
    checkpointPrefix: `${cfg.prefix}checkpoints/`,
    checkpointRetentionDays: cfg.checkpointRetentionDays,
    abortIncompleteUploadDays: 7,
    serviceAccount: { namespace: workloadNamespace, name: RAY_SERVICE_ACCOUNT },
    jobServiceAccounts: [...new Set(workloads.map(jobServiceAccount))].filter((n) => n !== RAY_SERVICE_ACCOUNT),
    fsx: cfg.fsx && { ...cfg.fsx, importPath: cfg.prefix },
  };
}
