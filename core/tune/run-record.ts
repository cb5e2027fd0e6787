/**
 * The run record: what one run of a workload measured, in the form `ray-gpu tune` reads. The runtime writes it when
 * the job ends (`ray_gpu.run_record`, validated against `runtime/ray_gpu/run_record.schema.json`, generated from this
 * one definition by `npm run generate`). `ray-gpu report` shows a run from Prometheus for a person; it has no plan
 * digest and no per-operator busy time, so it writes no record.
 */
import { z } from "zod";
import { ACCELERATORS } from "../catalog/accelerators";
import { withoutSafeIntegerBounds } from "../json-schema";

/** The record's version. */
export const RUN_RECORD_API_VERSION = "ray-gpu.dev/run-record/v1";

/** The stages a Ray Data operator belongs to, by what it does. */
export const DATA_STAGES = ["read", "preprocess", "gpu", "write"] as const;
/** A Ray Data stage. */
export type DataStage = (typeof DATA_STAGES)[number];

const count = z.number().int().min(0);
const fraction = z.number().min(0).max(1);

/** The longest a job may run: `maxRuntimeMinutes` is at most 43,200 (30 days). */
const MAX_RUN_SECONDS = 30 * 24 * 3600;
/** Tasks or actors an operator may run at once: a Ray cluster's CPUs and GPUs, 2,000 nodes of 192 vCPUs at most. */
const MAX_SLOTS = 384_000;
/** The most device memory one GPU of the catalog has, in GiB: PyTorch's peak allocation cannot exceed it. */
const MAX_GPU_GIB = Math.max(...Object.values(ACCELERATORS).map((a) => a.memoryMiB)) / 1024;
/** How far an operator's busy time may exceed its slots' time in the run (clocks of tasks and driver differ a little). */
const BUSY_TOLERANCE = 1.1;

/**
 * One Ray Data operator as its stats summary gives it (fused operators count as the last stage they hold).
 * @internal
 */
export const OperatorRecordSchema = z.strictObject({
  /** Ray Data's operator name, e.g. `MapBatches(Embedder)` or `ReadParquet->MapBatches(Tokenize)`. */
  name: z.string().min(1),
  stage: z.enum(DATA_STAGES),
  /** How many of its tasks or actors could run at once: the plan's pool, or the cluster's CPUs for a read. */
  slots: z.number().int().min(1).max(MAX_SLOTS),
  /** Tasks that produced blocks. */
  tasks: count,
  /** Sum of its tasks' wall time: at most its slots times the run's wall time (checked with the run). */
  busySeconds: z.number().min(0),
  /** Rows it produced. */
  rowsOut: count,
  /** Its largest output block. */
  maxBlockBytes: count,
});

/**
 * A Ray Data pipeline run.
 * @internal
 */
export const DataRecordSchema = z.strictObject({
  /** From the first read to the last write: a millisecond to 30 days (the longest a job may run). */
  wallSeconds: z.number().min(0.001).max(MAX_RUN_SECONDS),
  /** Rows written. */
  rows: count,
  operators: z.array(OperatorRecordSchema).min(1),
});

/**
 * A training loop run (the telemetry of every worker, `ray_gpu.telemetry`).
 * @internal
 */
export const TrainRecordSchema = z.strictObject({
  workers: z.number().int().min(1),
  /** Loop steps (micro-batches, as `StepTelemetry` counts them) of the slowest worker. */
  steps: count,
  /** Share of the loop's time spent waiting for the next batch, the largest over the workers. */
  dataWaitFraction: fraction,
  samplesPerSecond: z.number().min(0),
});

/**
 * The cluster's object stores during the run.
 * @internal
 */
export const ObjectStoreRecordSchema = z
  .strictObject({
    /** Object-store memory of every node together (`ray.cluster_resources()`), the head's included. */
    capacityBytes: z.number().int().min(1),
    /**
     * Object-store memory of the nodes that run the pipeline's tasks and actors (those offering CPUs or GPUs): the
     * workers, since the plan's head offers none. At most `capacityBytes`. `tune` sizes blocks from this figure.
     */
    workerCapacityBytes: z.number().int().min(1),
    /** Bytes spilled to disk during the run. */
    spilledBytes: count,
  })
  .refine((s) => s.workerCapacityBytes <= s.capacityBytes, {
    path: ["workerCapacityBytes"],
    message: "must be at most capacityBytes: the workers' stores are part of the cluster's",
  });

/**
 * Peak GPU memory (PyTorch's max allocated) per worker, in GiB.
 * @internal
 */
export const GpuMemoryRecordSchema = z.strictObject({
  peakGiB: z.array(z.number().min(0).max(MAX_GPU_GIB)).min(1),
});

/** The kinds whose Ray Data pipeline runs a GPU stage: their record's operators must include one. */
const GPU_PIPELINE_KINDS: readonly string[] = ["EmbeddingPipeline", "BatchInference"];

/**
 * The record's numbers agree with each other, or no diagnosis is made of them: each operator named once, none busier
 * than its slots could be in the run, and a GPU stage in the pipeline of a kind that has one.
 */
function consistentRecord(
  r: { workload: { kind: string }; data?: z.infer<typeof DataRecordSchema> | undefined },
  ctx: z.RefinementCtx,
): void {
  if (!r.data) return;
  const { operators, wallSeconds } = r.data;
  const first = new Map<string, number>();
  operators.forEach((o, i) => {
    const at = ["data", "operators", i];
    if (first.has(o.name))
      ctx.addIssue({
        code: "custom",
        path: [...at, "name"],
        message: `names the same operator as operators[${first.get(o.name)}]`,
      });
    else first.set(o.name, i);
    if (o.busySeconds > BUSY_TOLERANCE * o.slots * wallSeconds)
      ctx.addIssue({
        code: "custom",
        path: [...at, "busySeconds"],
        message:
          `is more than its ${o.slots} slots could work in the ${wallSeconds} s run (${o.slots * wallSeconds} s): ` +
          "the record's numbers contradict each other",
      });
  });
  if (GPU_PIPELINE_KINDS.includes(r.workload.kind) && !operators.some((o) => o.stage === "gpu"))
    ctx.addIssue({
      code: "custom",
      path: ["data", "operators"],
      message: `holds no gpu-stage operator, which every ${r.workload.kind} pipeline runs: the record is not of this kind's run`,
    });
}

/**
 * A run record, version 1.
 * @internal
 */
export const RunRecordSchema = z
  .strictObject({
    apiVersion: z.literal(RUN_RECORD_API_VERSION),
    kind: z.literal("RunRecord"),
    workload: z.strictObject({
      name: z.string().min(1),
      kind: z.enum(["TrainingJob", "LoRAFineTune", "EmbeddingPipeline", "BatchInference"]),
      environment: z.string().min(1),
      /** The tuning document's `workload.planDigest`: which plan ran. */
      planDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
    }),
    /** Who measured: the runtime library in the job, the only source of version 1. */
    source: z.enum(["runtime"]),
    /** When the run ended: an RFC 3339 date-time that exists (no 30 February, no hour 25). */
    recordedAt: z.iso.datetime({ offset: true }),
    data: DataRecordSchema.optional(),
    train: TrainRecordSchema.optional(),
    objectStore: ObjectStoreRecordSchema.optional(),
    gpuMemory: GpuMemoryRecordSchema.optional(),
  })
  .superRefine(consistentRecord);

// The plain types of these schemas, generated from them (scripts/public-types): the public API's, without zod.
export type { OperatorRecord, RunRecord } from "./types";

/** The JSON Schema the runtime validates its records with (`runtime/ray_gpu/run_record.schema.json`). */
export function runRecordJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(RunRecordSchema) as Record<string, unknown>;
  withoutSafeIntegerBounds(schema);
  return {
    ...schema,
    $id: `https://pulumi-ray-gpu.dev/schemas/${RUN_RECORD_API_VERSION}/run-record.json`,
    title: `ray-gpu run record (${RUN_RECORD_API_VERSION})`,
  };
}
