/**
 * The fields every workload kind has, and the names, values and data they take. The kinds' schemas (./training.ts,
 * ./data.ts) spread {@link workloadBase} into their own.
 */
import { z } from "zod";
import { GPU_INSTANCE_TYPES } from "../../catalog/instances";
import { ModelRefSchema } from "../model-ref";
import { dnsLabel } from "../platform";
import { rayImageGpuProblem, rayImageProblem } from "../../ray";
import { imageReferenceProblem } from "../image-reference";
import { distinctEntries, pipProject } from "../distinct";
import { mixedHashIssues, PIP_REQUIREMENT, PIP_REQUIREMENT_RULE } from "../pip";
import { ownedEnvProblem } from "../owned-env";
import { envRuleProblem, secretEnvRuleProblem } from "../env-rules";
import { freeText } from "../free-text";
import { DataUriSchema } from "../grammars";
import { plainEnv, SECRET_COMMAND_FIX, secretInCommand, SecretEnvSourceSchema } from "../secrets";

/** Most combinations a generation sweep may have (each prompt becomes one row per combination). */
export const MAX_SWEEP_SETTINGS = 1024;

/** KubeRay limits RayJob names to 47 characters (`MaxRayJobNameLength`) and DNS-1035 labels. */
export const MAX_RAYJOB_NAME_LENGTH = 47;

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be a valid environment variable name");
/** Names a user may set: not one that pulumi-ray-gpu, Ray, KubeRay or the device plugin sets (./owned-env.ts). */
const userEnvName = envName.superRefine((name, ctx) => {
  const problem = ownedEnvProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
/**
 * Plain variables (`env`, `runtimeEnv.envVars`) with `name`'s names: no secret-looking value (./secrets.ts), and no
 * variable that turns TLS checks off, moves the AWS credential endpoint or redirects downloads other than over HTTPS
 * (./env-rules.ts).
 */
const checkedEnv = <K extends z.ZodType<string>>(name: K) =>
  plainEnv(name).superRefine((vars, ctx) => {
    for (const [key, value] of Object.entries(vars)) {
      const problem = envRuleProblem(key, value);
      if (problem)
        ctx.addIssue({ code: "custom", path: [key], message: problem.message, params: { redact: problem.redact } });
    }
  });
/** `secretEnv` names: a user's name (`userEnvName`) that no rule of ./env-rules.ts governs. */
const secretEnvName = userEnvName.superRefine((name, ctx) => {
  const problem = secretEnvRuleProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});
/**
 * A whole number of at least 1.
 * @internal
 */
export const positiveInt = z.number().int().min(1);
/**
 * Where a workload reads its data, and how much there is (drives block sizes and read parallelism).
 * @internal
 */
export const DatasetSchema = z.strictObject({
  /** `s3://bucket/key/` or a path on shared storage. */
  uri: DataUriSchema,
  /** @default "parquet" */
  format: z.enum(["parquet", "jsonl", "csv", "text"]).default("parquet"),
  /** Rows in the full dataset. @default - unknown: read parallelism follows the cluster's CPUs */
  rows: z.number().int().min(1).max(1e12).optional(),
  /** Average characters of text per row. @default 1000 */
  avgTextChars: z.number().int().min(1).max(10_000_000).default(1000),
});

/**
 * Fields every workload kind has.
 * @internal
 */
export const workloadBase = {
  /**
   * An example on placeholder data: planned and rendered like any workload (so `ray-gpu plan` and `render` show it),
   * but never submitted by `pulumi up`. Remove the flag once the image, entrypoint and data are yours.
   * @default false
   */
  example: z.boolean().default(false),
  /** Input data. @default - none: the entrypoint reads its own data */
  dataset: DatasetSchema.optional(),
  /** Where results go (embeddings, generations). @default - `<prefix>results/<name>/` in the stack's bucket */
  outputUri: DataUriSchema.optional(),
  /**
   * Share of the dataset a dev run reads (prod reads everything).
   * @default 0.01
   */
  devSampleFraction: z.number().gt(0).max(1).default(0.01),
  /** RayJob name: a DNS-1035 label of at most 47 characters (KubeRay's limit). */
  name: dnsLabel(MAX_RAYJOB_NAME_LENGTH),
  /** The model: a catalog id (or alias) or its architecture. */
  model: ModelRefSchema,
  /** Total A10G GPUs for the job; a whole number of nodes of the chosen pool. */
  gpus: positiveInt.max(1024),
  /**
   * GPU pool to run on, by name.
   * @default - the pool with `instanceType`, else the first GPU pool
   */
  nodePool: dnsLabel(40).optional(),
  /**
   * g5 size to run on; picks the pool with that instance type.
   * @default - the instance type of `nodePool`, else of the first GPU pool, else g5.12xlarge
   */
  instanceType: z.enum(GPU_INSTANCE_TYPES).optional(),
  /**
   * Container image with Ray, the user's code and its dependencies. Needed to render. Ray's own images
   * (`rayproject/ray`) must be Ray 2.58.0 (`RAY_VERSION`), the version the RayJob declares and the runtime is tested with,
   * and a CUDA build (a `-gpu` or `-cu<version>` tag): the CPU-only ones fail at the first CUDA call. Any image must be
   * a reference the kubelet can pull: `[registry[:port]/]path[:tag][@sha256:<64 hex>]` (docs/configuration.md).
   * @default - none: the workload can be planned but not rendered
   */
  image: z
    .string()
    .min(1)
    .superRefine((image, ctx) => {
      const grammar = imageReferenceProblem(image);
      const problems = grammar ? [grammar] : [rayImageProblem(image), rayImageGpuProblem(image)];
      for (const problem of problems) if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .optional(),
  /**
   * Command the Ray job runs, e.g. `python train.py`. Needed to render.
   * @default - none: the workload can be planned but not rendered
   */
  entrypoint: freeText(
    z
      .string()
      .min(1)
      .superRefine((command, ctx) => {
        const why = secretInCommand(command);
        if (why) ctx.addIssue({ code: "custom", message: `${why}: ${SECRET_COMMAND_FIX}`, params: { redact: true } });
      }),
    "a command line of the user's program, any shell words; the check only refuses a secret in clear text",
  ).optional(),
  /**
   * Hard limit on the whole run, in minutes.
   * @default - the environment's limit (dev: 120, prod: 1440)
   */
  maxRuntimeMinutes: positiveInt.max(43200).optional(),
  /**
   * Average GPU utilization (DCGM_FI_DEV_GPU_UTIL, %) the job should hold while it runs; an alert fires when it stays
   * below for 15 minutes (docs/observability.md).
   * @default - 90 for TrainingJob and LoRAFineTune, 85 for EmbeddingPipeline and BatchInference
   */
  gpuUtilizationTargetPercent: positiveInt.max(100).optional(),
  /**
   * Extra environment variables for every Ray container. Names that pulumi-ray-gpu, Ray, KubeRay or the NVIDIA device
   * plugin set (RAY_GPU_*, NCCL_*, RAY_ADDRESS, CUDA_VISIBLE_DEVICES, ...; docs/configuration.md) are refused.
   * @default {}
   */
  env: checkedEnv(userEnvName).default({}),
  /**
   * Secret environment variables for every Ray container, rendered as `valueFrom.secretKeyRef`: never in clear text
   * in the RayJob, the plan or Pulumi's state. Each names an existing Secret and key, or a Pulumi secret config key.
   * @default {}
   */
  secretEnv: z.record(secretEnvName, SecretEnvSourceSchema).default({}),
  /**
   * Ray runtime environment the job is submitted with (KubeRay's `runtimeEnvYAML`): packages pip installs on
   * top of the image before the job starts, and variables for every job process. Prefer baking packages into
   * the image for large or frequent jobs; pip runs at every job start.
   * @default - none: the image has everything
   */
  runtimeEnv: z
    .strictObject({
      /**
       * pip requirements, each pinned to one exact version (`torch==2.13.0`), optionally with pip's hash options
       * (`torch==2.13.0 --hash=sha256:<digest>`): all hashed or none; a prod job's must be (core/config/pip.ts).
       */
      pip: z
        .array(z.string().regex(PIP_REQUIREMENT, PIP_REQUIREMENT_RULE))
        .min(1)
        .superRefine(
          distinctEntries(
            'pip refuses a project required twice ("Double requirement given"); keep one pin',
            pipProject,
          ),
        )
        .superRefine((list, ctx) => {
          for (const i of mixedHashIssues(list)) ctx.addIssue({ code: "custom", path: [i.index], message: i.message });
        })
        .optional(),
      /** Variables for the driver and every worker process of the job. */
      envVars: checkedEnv(
        userEnvName.refine(
          (n) => n !== "PYTHONPATH",
          "would replace the path to the runtime library: set PYTHONPATH in env, which keeps it first",
        ),
      ).optional(),
    })
    .optional(),
};
