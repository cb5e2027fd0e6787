/**
 * The run record: what one run of a workload measured, in the form `ray-gpu tune` reads. The runtime writes it when
 * the job ends (`ray_gpu.run_record`, validated against `runtime/ray_gpu/run_record.schema.json`, generated from this
 * one definition by `npm run generate`). `ray-gpu report` shows a run from Prometheus for a person; it has no plan
 * digest and no per-operator busy time, so it writes no record.
 */
import { z } from "zod";
import { withoutSafeIntegerBounds } from "../json-schema";

/** The record's version. */
export const RUN_RECORD_API_VERSION = "ray-gpu.dev/run-record/v1";

/** The stages a Ray Data operator belongs to, by what it does. */
export const DATA_STAGES = ["read", "preprocess", "gpu", "write"] as const;
/** A Ray Data stage. */
export type DataStage = (typeof DATA_STAGES)[number];

const count = z.number().int().min(0);
const seconds = z.number().min(0);
const fraction = z.number().min(0).max(1);

/**
 * One Ray Data operator as its stats summary gives it (fused operators count as the last stage they hold).
 * @internal
 */
export const OperatorRecordSchema = z.strictObject({
  /** Ray Data's operator name, e.g. `MapBatches(Embedder)` or `ReadParquet->MapBatches(Tokenize)`. */
  name: z.string().min(1),
  stage: z.enum(DATA_STAGES),
  /** How many of its tasks or actors could run at once: the plan's pool, or the cluster's CPUs for a read. */
  slots: z.number().int().min(1),
  /** Tasks that produced blocks. */
  tasks: count,
  /** Sum of its tasks' wall time. */
  busySeconds: seconds,
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
  /** From the first read to the last write. */
  wallSeconds: z.number().positive(),
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
  peakGiB: z.array(z.number().min(0)).min(1),
});

/**
 * A run record, version 1.
 * @internal
 */
export const RunRecordSchema = z.strictObject({
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
  /** When the run ended (RFC 3339). */
  recordedAt: z.string().min(1),
  data: DataRecordSchema.optional(),
  train: TrainRecordSchema.optional(),
  objectStore: ObjectStoreRecordSchema.optional(),
  gpuMemory: GpuMemoryRecordSchema.optional(),
});

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
