/**
 * Schemas of the entries of `ray-gpu:workloads`. The same schemas validate stack config, workload files given
 * to `ray-gpu plan --workload`, and TypeScript callers of the workload constructs.
 */
import { z } from "zod";
import { GPU_INSTANCE_TYPES } from "../catalog/instances";
import { dnsLabel } from "./platform";

/** KubeRay limits RayJob names to 47 characters (`MaxRayJobNameLength`) and DNS-1035 labels. */
export const MAX_RAYJOB_NAME_LENGTH = 47;

/** Environment variable names a container accepts. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a valid environment variable name");

/** Fields every workload kind has. */
const workloadBase = {
  /** RayJob name: a DNS-1035 label of at most 47 characters (KubeRay's limit). */
  name: dnsLabel(MAX_RAYJOB_NAME_LENGTH),
  /**
   * Total A10G GPUs for the job. Must be a whole number of nodes of the chosen pool.
   */
  gpus: z.number().int().min(1).max(1024),
  /**
   * GPU pool to run on, by name.
   * @default - the pool with `instanceType`, else the first GPU pool
   */
  nodePool: dnsLabel(40).optional(),
  /**
   * g5 size to run on; picks the pool with that instance type.
   * @default - the instance type of `nodePool`, else of the first GPU pool
   */
  instanceType: z.enum(GPU_INSTANCE_TYPES).optional(),
  /**
   * Container image with Ray (matching `rayVersion`), the user's code and its dependencies.
   */
  image: z.string().min(1).regex(/^\S+$/, "must be an image reference without spaces"),
  /** Command the Ray job runs, e.g. `python train.py`. */
  entrypoint: z.string().min(1),
  /**
   * Hard limit on the whole run, in minutes.
   * @default - the environment's limit (dev: 120, prod: 1440)
   */
  maxRuntimeMinutes: z.number().int().min(1).max(43200).optional(),
  /**
   * Extra environment variables for every Ray container (user settings; tuned values win on conflict).
   * @default {}
   */
  env: z.record(envName, z.string()).default({}),
};

/** Multi-node data-parallel training with Ray Train. */
export const TrainingJobSpecSchema = z.strictObject({
  kind: z.literal("TrainingJob"),
  ...workloadBase,
  /**
   * Data-parallel strategy.
   * @default "ddp"
   */
  strategy: z.enum(["ddp"]).default("ddp"),
});

/** Any workload entry. */
export const WorkloadSpecSchema = z.discriminatedUnion("kind", [TrainingJobSpecSchema]);

export type TrainingJobSpec = z.infer<typeof TrainingJobSpecSchema>;
export type TrainingJobSpecInput = z.input<typeof TrainingJobSpecSchema>;
export type WorkloadSpec = z.infer<typeof WorkloadSpecSchema>;
export type WorkloadKind = WorkloadSpec["kind"];
