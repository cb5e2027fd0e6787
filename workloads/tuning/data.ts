/**
 * Ray Data tuning for embedding and batch-inference jobs: GPU actor pools that start at full size, fractional
 * GPUs for small encoders, CPU preprocessing sized to feed them, and block sizes chosen so the in-flight working
 * set fits Ray Data's share of the object store (no spilling). The plan shows the arithmetic.
 *
 * Ray facts (shared/facts/ray-tuning.md, ray 2.58): Ray Data's streaming executor may use 50% of the cluster's
 * object store; an actor keeps up to 2 × max_concurrency tasks in flight; `target_max_block_size` defaults to
 * 128 MiB and blocks should stay above 1 MiB; a GPU `map_batches` needs an explicit integer `batch_size`.
 */
import type { ClusterShapePlan } from "../../core/cluster/shape";
import type { BatchInferenceSpec, EmbeddingPipelineSpec } from "../../core/config/workloads";
import type { Environment } from "../../core/config/stack";
import { DecisionLog, type Decision } from "../../core/decisions";
import { GIB, MIB } from "../../core/quantity";
import type { ModelArchitecture } from "../../core/models/types";

/** Ray Data's object-store share (RAY_DATA_OBJECT_STORE_MEMORY_LIMIT_FRACTION default with reservation on). */
export const RAY_DATA_OBJECT_STORE_FRACTION = 0.5;
/** We size the working set to this share of Ray Data's budget, leaving room for skew between operators. */
export const WORKING_SET_TARGET = 0.8;
/** Tasks in flight per actor (2 × max_concurrency 1): one computing, one prefetched. */
export const TASKS_IN_FLIGHT_PER_ACTOR = 2;
/** Encoders below this size cannot keep an A10G busy from one process. */
export const SMALL_ENCODER_PARAMETERS = 150e6;
const MAX_BLOCK_BYTES = 128 * MIB;
const MIN_BLOCK_BYTES = 1 * MIB;

export interface DataTuning {
  readonly uri: string | undefined;
  readonly format: string | undefined;
  readonly sampleFraction: number;
  readonly rowsToRead: number | undefined;
  readonly blockSizeBytes: number;
  readonly rowsPerBlock: number;
  readonly readParallelism: number;
  /** Explicit Ray Data object-store limit (DataContext.execution_options.resource_limits.object_store_memory). */
  readonly objectStoreLimitBytes: number;
  /** Bytes the pipeline keeps in flight at most, by the arithmetic in the decisions. */
  readonly workingSetBytes: number;
}

export interface ActorPoolTuning {
  /** Fixed pool: min = max = size, so it starts at full size. */
  readonly actorPoolSize: number;
  readonly gpusPerActor: number;
  readonly batchSize: number;
  readonly maxTasksInFlightPerActor: number;
  /** CPU tasks (1 CPU each) for reading and tokenizing. */
  readonly preprocessConcurrency: number;
}

export interface InferenceSweep {
  readonly parameters: Readonly<Record<string, readonly (string | number | boolean)[]>>;
  /** Every combination, in a stable order. */
  readonly grid: readonly Readonly<Record<string, string | number | boolean>>[];
  /** Each prompt becomes one row per combination; Ray Data spreads rows over all replicas. */
  readonly rowsPerPrompt: number;
}

/** Cartesian product of the sweep, keys sorted. */
export function sweepGrid(parameters: Readonly<Record<string, readonly (string | number | boolean)[]>>): Record<string, string | number | boolean>[] {
  let grid: Record<string, string | number | boolean>[] = [{}];
  for (const key of Object.keys(parameters).sort()) grid = grid.flatMap((g) => parameters[key]!.map((v) => ({ ...g, [key]: v })));
  return grid;
}

/** Tunes Ray Data and the GPU actor pool of an embedding or batch-inference job. */
export function tuneData(args: {
  spec: EmbeddingPipelineSpec | BatchInferenceSpec;
  model: ModelArchitecture;
  knobs: Readonly<Record<string, string | number | boolean>>;
  shape: ClusterShapePlan;
  environment: Environment;
  /** Rows per GPU batch for one actor (the memory plan's, scaled for fractional GPUs). */
  batchSizePerActor: number;
  gpusPerActor: number;
}): { data: DataTuning; pool: ActorPoolTuning; sweep: InferenceSweep | undefined; decisions: readonly Decision[] } {
  const { spec, shape, model } = args;
  const log = new DecisionLog();
  const nodes = shape.worker.replicas;
  const actors = Math.round(spec.gpus / args.gpusPerActor);
  log.decide("data.actorPoolSize", actors, `${spec.gpus} GPUs / ${args.gpusPerActor} GPU per actor; min = max = ${actors}, so the pool starts at full size instead of autoscaling up from one actor`);
  const cpusForActors = actors; // one CPU per GPU actor for its Python loop
  const preprocess = Math.max(1, nodes * shape.worker.cpus - cpusForActors);
  log.decide("data.preprocessConcurrency", preprocess, `${nodes} node(s) x ${shape.worker.cpus} CPUs - ${cpusForActors} for the GPU actors: CPU tasks that read and tokenize, sized to keep every actor fed`);
  const seq = spec.kind === "EmbeddingPipeline" ? Number(args.knobs["sequenceLength"]) : spec.maxPromptTokens + spec.maxNewTokens;
  const textBytes = spec.dataset?.avgTextChars ?? 1000;
  // Per row in flight: the text, its token ids and attention mask (int64), and the output.
  const outBytes = spec.kind === "EmbeddingPipeline" ? 4 * (model.embeddingDim ?? model.hiddenSize) : 4 * spec.maxNewTokens;
  // A sweep turns each prompt into one row per setting: size blocks for the expanded rows.
  const settings = spec.kind === "BatchInference" ? sweepGrid(spec.sweep).length : 1;
  const rowBytes = settings * (textBytes + 16 * seq + outBytes);
  log.decide("data.bytesPerRowInFlight", rowBytes, `${settings > 1 ? `${settings} sweep settings x ` : ""}(${textBytes} B of text + ${16 * seq} B of token ids and mask (2 x int64 x ${seq}) + ${outBytes} B of output)`);
  const budget = Math.floor(nodes * shape.worker.objectStoreGiB * GIB * RAY_DATA_OBJECT_STORE_FRACTION);
  log.decide("data.objectStoreLimitBytes", budget, `${RAY_DATA_OBJECT_STORE_FRACTION * 100}% of the cluster's object store (${nodes} x ${shape.worker.objectStoreGiB} GiB), set explicitly as Ray Data's limit`);
  const inFlightBlocks = preprocess + actors * TASKS_IN_FLIGHT_PER_ACTOR;
  // Each in-flight block exists as input and output of its operator.
  const fitBlock = Math.floor((budget * WORKING_SET_TARGET) / (2 * inFlightBlocks));
  const blockBytes = Math.max(MIN_BLOCK_BYTES, Math.min(MAX_BLOCK_BYTES, fitBlock, Math.max(rowBytes, args.batchSizePerActor * rowBytes)));
  const rowsPerBlock = Math.max(1, Math.floor(blockBytes / rowBytes));
  log.decide("data.blockSizeBytes", blockBytes, `min(128 MiB default, ${WORKING_SET_TARGET * 100}% of the limit / (2 x ${inFlightBlocks} blocks in flight: ${preprocess} CPU tasks + ${actors} actors x ${TASKS_IN_FLIGHT_PER_ACTOR}), one GPU batch = ${args.batchSizePerActor} rows), at least 1 MiB: ${rowsPerBlock} rows per block`);
  const workingSet = 2 * inFlightBlocks * blockBytes;
  log.decide("data.workingSetBytes", workingSet, `2 x ${inFlightBlocks} blocks x ${blockBytes} B = ${(workingSet / GIB).toFixed(2)} GiB <= ${(budget / GIB).toFixed(2)} GiB limit: nothing spills`);
  const sample = args.environment === "dev" ? spec.devSampleFraction : 1;
  log.decide("data.sampleFraction", sample, args.environment === "dev" ? "dev reads a sample of the data (devSampleFraction)" : "prod reads the whole dataset");
  const rows = spec.dataset?.rows === undefined ? undefined : Math.max(1, Math.ceil(spec.dataset.rows * sample));
  // Ray Data's heuristic: enough blocks for the data, at least 2 read tasks per CPU, but no block under 1 MiB.
  const cpuFloor = 2 * nodes * shape.worker.cpus;
  const readParallelism =
    rows === undefined ? cpuFloor : Math.min(rows, Math.max(Math.ceil(rows / rowsPerBlock), Math.min(cpuFloor, Math.ceil((rows * rowBytes) / MIN_BLOCK_BYTES))));
  log.decide(
    "data.readParallelism",
    readParallelism,
    rows === undefined ? "row count unknown: 2 read tasks per CPU (Ray Data's own floor)" : `${rows} rows / ${rowsPerBlock} rows per block, raised toward 2 read tasks per CPU only while blocks stay >= 1 MiB, at most one per row`,
  );
  let sweep: InferenceSweep | undefined;
  if (spec.kind === "BatchInference") {
    const grid = sweepGrid(spec.sweep); // at most MAX_SWEEP_SETTINGS combinations (schema)
    sweep = { parameters: spec.sweep, grid, rowsPerPrompt: grid.length };
    log.decide("inference.sweep", `${grid.length} setting(s)`, "each prompt becomes one row per setting, so Ray Data spreads the whole sweep over every replica and no replica idles while another finishes its settings");
  }
  return {
    data: { uri: spec.dataset?.uri, format: spec.dataset?.format, sampleFraction: sample, rowsToRead: rows, blockSizeBytes: blockBytes, rowsPerBlock, readParallelism, objectStoreLimitBytes: budget, workingSetBytes: workingSet },
    pool: { actorPoolSize: actors, gpusPerActor: args.gpusPerActor, batchSize: args.batchSizePerActor, maxTasksInFlightPerActor: TASKS_IN_FLIGHT_PER_ACTOR, preprocessConcurrency: preprocess },
    sweep,
    decisions: log.decisions,
  };
}
