/**
 * Environment profiles: what "dev" and "prod" mean for a RayJob's lifecycle. Exhaustive over
 * {@link Environment}, so a new environment fails to compile until it is fully described.
 *
 * KubeRay v1.7.0 rules these profiles respect (ray-operator/controllers/ray/utils/validation.go):
 * - `ttlSecondsAfterFinished` only works with `shutdownAfterJobFinishes: true`;
 * - `deletionStrategy.deletionRules` and `shutdownAfterJobFinishes` are mutually exclusive, and so are rules
 *   and a global TTL;
 * - per job status, TTLs must not decrease in the order DeleteWorkers <= DeleteCluster <= DeleteSelf;
 * - `activeDeadlineSeconds` and `preRunningDeadlineSeconds` must be positive, `backoffLimit` non-negative.
 */
import type { GpuCapacityType } from "./config/platform";
import type { Environment } from "./config/environment-names";

/** One deletion rule of `spec.deletionStrategy.deletionRules`. */
export interface DeletionRule {
  readonly policy: "DeleteCluster" | "DeleteWorkers" | "DeleteSelf" | "DeleteNone";
  readonly condition:
    | { readonly jobStatus: "SUCCEEDED" | "FAILED"; readonly ttlSeconds: number }
    | { readonly jobDeploymentStatus: "Failed"; readonly ttlSeconds: number };
}

/** How the per-job RayCluster goes away when the job ends. */
export type CleanupPolicy =
  | {
      /** `shutdownAfterJobFinishes: true` with a TTL: the cluster goes `ttlSeconds` after any terminal state. */
      readonly mode: "shutdown";
      readonly ttlSeconds: number;
    }
  | {
      /** `deletionStrategy.deletionRules`: different treatment for success and failure. */
      readonly mode: "rules";
      readonly rules: readonly DeletionRule[];
    };

/** What an environment means for a RayJob. */
export interface EnvironmentProfile {
  /** How the cluster is cleaned up after the job. */
  readonly cleanup: CleanupPolicy;
  /**
   * Cleanup when the job is submitted through Kueue, which admits only jobs with `shutdownAfterJobFinishes`
   * (kueue pkg/controller/jobs/rayjob/rayjob_webhook.go); KubeRay makes that exclusive with deletion rules.
   */
  readonly queuedCleanup: CleanupPolicy & { readonly mode: "shutdown" };
  /** RayJob-level retries; each retry creates a new RayCluster. */
  readonly backoffLimit: number;
  /** Limit on the time to reach Running (scale-up from zero plus image pull). */
  readonly preRunningDeadlineSeconds: number;
  /** Default limit on the whole run, when the workload sets no `maxRuntimeMinutes`. */
  readonly defaultMaxRuntimeMinutes: number;
  /** `NCCL_DEBUG` level, or undefined to leave it unset (NCCL docs: no debug variables in production). */
  readonly ncclDebug: "WARN" | "INFO" | undefined;
  /**
   * Whether GPU pools may run on spot capacity alone (`capacityType: spot`). `spot-with-fallback` is allowed in every
   * environment: a job waits for spot only up to `spotWaitMinutes`, then runs on demand.
   */
  readonly spotAllowed: boolean;
  /**
   * Whether a job's `runtimeEnv.pip` may install packages without hashes (core/config/pip.ts). Where false, every
   * requirement carries a `--hash` and pip runs with `--require-hashes`: nothing unverified installs at job start.
   */
  readonly unverifiedPip: boolean;
  /**
   * A job that fits in GPU memory on its pool's own instance type but not on one of the pool's fallback types:
   * `refuse` (a ConfigError naming the type, so the fallback never starts a node the job would run out of memory on),
   * or `warn` (planned on the pool's own type; the plan names the types it would not fit on).
   */
  readonly fallbackMisfit: "refuse" | "warn";
  /** What the environment means for the platform. */
  readonly platform: {
    /** NAT gateways: one shared (cheap) or one per zone (no cross-zone dependency). */
    readonly natGateways: "Single" | "OnePerAz";
    /** Zones with private subnets when the config does not say. */
    readonly availabilityZones: number;
    /** Cluster Autoscaler: how long a node must be unneeded before it is removed, and the pause after a scale-up. */
    readonly scaleDownUnneededTime: string;
    readonly scaleDownDelayAfterAdd: string;
    /** Let `pulumi destroy` delete a bucket that still holds objects. */
    readonly bucketForceDestroy: boolean;
    /** Protect the bucket and its KMS key from `pulumi destroy` and replacement, and keep them if removed from the program. */
    readonly protectData: boolean;
    /** Days a deleted KMS key can still be recovered (AWS allows 7-30). */
    readonly kmsDeletionWindowDays: number;
    /** Allow a public Kubernetes API endpoint open to every address (0.0.0.0/0). */
    readonly openApiEndpoint: boolean;
    readonly why: string;
  };
  /** Why these values, for `ray-gpu plan`. */
  readonly why: {
    readonly cleanup: string;
    readonly queuedCleanup: string;
    readonly backoffLimit: string;
    readonly preRunningDeadlineSeconds: string;
    readonly defaultMaxRuntimeMinutes: string;
  };
}

/** Whether a GPU pool of `capacityType` may run in `environment` (spot alone only where the profile allows it). */
export function capacityAllowed(environment: Environment, capacityType: GpuCapacityType): boolean {
  return capacityType !== "spot" || ENVIRONMENT_PROFILES[environment].spotAllowed;
}

/** How long prod keeps a failed job's head (logs, dashboard) before deleting it. */
export const PROD_FAILED_HEAD_TTL_SECONDS = 3600;

/** Dev's cleanup, queued or not: the cluster goes the moment the job ends. */
const DEV_CLEANUP = { mode: "shutdown", ttlSeconds: 0 } as const;
const DEV_CLEANUP_WHY = "dev deletes the RayCluster the moment the job ends, success or failure, so no GPU node idles";

/** The profiles. */
export const ENVIRONMENT_PROFILES: { readonly [E in Environment]: EnvironmentProfile } = {
  dev: {
    cleanup: DEV_CLEANUP,
    queuedCleanup: DEV_CLEANUP,
    backoffLimit: 0,
    preRunningDeadlineSeconds: 20 * 60,
    defaultMaxRuntimeMinutes: 120,
    ncclDebug: "WARN",
    spotAllowed: true,
    unverifiedPip: true,
    fallbackMisfit: "warn",
    platform: {
      natGateways: "Single",
      availabilityZones: 2,
      scaleDownUnneededTime: "5m",
      scaleDownDelayAfterAdd: "5m",
      bucketForceDestroy: true,
      protectData: false,
      kmsDeletionWindowDays: 7,
      openApiEndpoint: true,
      why: "dev: one shared NAT gateway, two zones, idle GPU nodes removed after 5 min, a bucket that destroy may empty",
    },
    why: {
      cleanup: DEV_CLEANUP_WHY,
      queuedCleanup: DEV_CLEANUP_WHY,
      backoffLimit: "dev does not retry: a failing dev job should fail fast and visibly",
      preRunningDeadlineSeconds:
        "20 min covers a GPU node scaling up from zero (about 5 min) and pulling a multi-GB ML image",
      defaultMaxRuntimeMinutes: "dev runs are short samples; 2 h caps a forgotten job's cost",
    },
  },
  prod: {
    cleanup: {
      mode: "rules",
      rules: [
        { policy: "DeleteCluster", condition: { jobStatus: "SUCCEEDED", ttlSeconds: 0 } },
        { policy: "DeleteWorkers", condition: { jobStatus: "FAILED", ttlSeconds: 0 } },
        { policy: "DeleteCluster", condition: { jobStatus: "FAILED", ttlSeconds: PROD_FAILED_HEAD_TTL_SECONDS } },
        { policy: "DeleteWorkers", condition: { jobDeploymentStatus: "Failed", ttlSeconds: 0 } },
        {
          policy: "DeleteCluster",
          condition: { jobDeploymentStatus: "Failed", ttlSeconds: PROD_FAILED_HEAD_TTL_SECONDS },
        },
      ],
    },
    queuedCleanup: { mode: "shutdown", ttlSeconds: 0 },
    backoffLimit: 2,
    preRunningDeadlineSeconds: 45 * 60,
    defaultMaxRuntimeMinutes: 24 * 60,
    ncclDebug: undefined,
    spotAllowed: false,
    unverifiedPip: false,
    fallbackMisfit: "refuse",
    platform: {
      natGateways: "OnePerAz",
      availabilityZones: 3,
      scaleDownUnneededTime: "10m",
      scaleDownDelayAfterAdd: "10m",
      bucketForceDestroy: false,
      protectData: true,
      kmsDeletionWindowDays: 30,
      openApiEndpoint: false,
      why:
        "prod: a NAT gateway per zone, three zones, idle GPU nodes removed after 10 min (fewer scale flaps " +
        "between jobs), a bucket destroy never empties",
    },
    why: {
      cleanup:
        "prod deletes the cluster at once on success; on failure it frees the GPU workers at once and keeps the head " +
        (`(logs, dashboard) for ${PROD_FAILED_HEAD_TTL_SECONDS / 60} min for debugging (deletionRules; no ` +
          `shutdownAfterJobFinishes, as KubeRay requires)`),
      queuedCleanup:
        "queued through Kueue, which admits only jobs with shutdownAfterJobFinishes (exclusive with deletionRules in " +
        "KubeRay): the cluster goes the moment the job ends, freeing its quota and GPUs for the next job; the driver " +
        "log stays with the submitter Job (kubectl logs job/<name>) and the RayJob keeps its status and message",
      backoffLimit: "prod retries twice on a new cluster; training resumes from its last checkpoint",
      preRunningDeadlineSeconds: "45 min allows for scarce on-demand g5 capacity and image pulls before giving up",
      defaultMaxRuntimeMinutes: "24 h unless the workload sets maxRuntimeMinutes",
    },
  },
};
