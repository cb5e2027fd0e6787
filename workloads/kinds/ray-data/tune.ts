/**
 * Ray Data tuning for embedding and batch-inference jobs: GPU actor pools that start at full size, fractional GPUs for
 * small encoders, CPU preprocessing sized to feed them, and block sizes chosen so the in-flight working set fits Ray
 * Data's share of the object store (no spilling). The plan shows the arithmetic.
 *
 * Ray facts (ray 2.58, `ray/data/context.py`, `ray/data/_internal/execution/resource_manager.py`): Ray Data's streaming
 * executor may use 50% of the cluster's object store; an actor keeps up to 2 × max_concurrency tasks in flight;
 * `target_max_block_size` defaults to 128 MiB and blocks should stay above 1 MiB; a GPU `map_batches` needs an explicit
 * integer `batch_size`.
 *
 * Not planned, because Ray 2.58 ignores or already applies them (measured on a local cluster, docs/runtime-levers.md):
 * a read parallelism (`override_num_blocks` does not split parquet files), an explicit Ray Data object-store limit
 * (it would equal Ray's default of 50% of the store), and tasks in flight per actor (2 is Ray's default). Ray's
 * defaults for the last two still enter the working-set arithmetic below.
 */
import type { ClusterShapePlan } from "../../../core/cluster/shape";
import type { Environment } from "../../../core/config/stack";
import type { BatchInferenceSpec, EmbeddingPipelineSpec } from "../../../core/config/workloads";
import { DecisionLog } from "../../../core/decisions";
import { ConfigError } from "../../../core/errors";
import { GIB, MIB } from "../../../core/quantity";
import type { ActorPoolSection, DataSection, SweepSection } from "../../contract/document";
import type { DataJobTuning, DataTuning } from "../api/plans";

/** Ray Data's object-store share (RAY_DATA_OBJECT_STORE_MEMORY_LIMIT_FRACTION default with reservation on). */
export const RAY_DATA_OBJECT_STORE_FRACTION = 0.5;
/** We size the working set to this share of Ray Data's budget, leaving room for skew between operators. */
export const WORKING_SET_TARGET = 0.8;
/** Tasks in flight per actor, Ray's default (2 × max_concurrency 1): one computing, one prefetched. */
export const TASKS_IN_FLIGHT_PER_ACTOR = 2;
const MAX_BLOCK_BYTES = 128 * MIB;
const MIN_BLOCK_BYTES = 1 * MIB;

/** What the Ray Data tuner reads. */
export interface DataJobInput {
  readonly spec: EmbeddingPipelineSpec | BatchInferenceSpec;
  readonly shape: ClusterShapePlan;
  readonly environment: Environment;
  readonly gpusPerActor: number;
  /** Rows per GPU batch for one actor (the memory plan's, scaled for fractional GPUs). */
  readonly batchSizePerActor: number;
  /** Tokens of one row's sequence (token ids and mask are int64). */
  readonly sequenceTokens: number;
  /** Bytes of one row's output (an embedding, or the generated tokens). */
  readonly outputBytesPerRow: number;
  /** Rows each input row becomes (a sweep's settings); blocks are sized for the expanded rows. */
  readonly rowsPerInputRow: number;
  /** Config path of the workload, for error messages. */
  readonly path: string;
}

/** Actors of the pool and the CPU tasks that feed them (the workload's `preprocessConcurrency` when it sets one). */
function planPool(a: DataJobInput, log: DecisionLog): { actors: number; preprocess: number } {
  const { spec, shape } = a;
  const nodes = shape.worker.replicas;
  const actors = Math.round(spec.gpus / a.gpusPerActor);
  log.decide(
    "data.actorPoolSize",
    actors,
    `${spec.gpus} GPUs / ${a.gpusPerActor} GPU per actor; min = max = ${actors}, so the pool starts ` +
      `at full size instead of autoscaling up from one actor`,
  );
  // One CPU per GPU actor for its Python loop; the rest read and tokenize.
  const cpusLeft = Math.max(1, nodes * shape.worker.cpus - actors);
  const split = `${nodes} node(s) x ${shape.worker.cpus} CPUs - ${actors} for the GPU actors`;
  const set = spec.preprocessConcurrency;
  if (set !== undefined && set > cpusLeft) {
    const message = `${set} preprocessing tasks need ${set} CPUs; ${split} leaves ${cpusLeft}: set at most ${cpusLeft} or leave it out`;
    throw new ConfigError([{ path: `${a.path}.preprocessConcurrency`, message, value: set }]);
  }
  const preprocess = log.decide(
    "data.preprocessConcurrency",
    set ?? cpusLeft,
    set === undefined
      ? `${split}: CPU tasks that read and tokenize, sized to keep every actor fed`
      : `set by the workload (preprocessConcurrency); ${split} would give ${cpusLeft}`,
  );
  return { actors, preprocess };
}

/** Bytes one row holds while in flight: its text, token ids and attention mask, and its output. */
function rowBytesInFlight(a: DataJobInput, log: DecisionLog): number {
  const textBytes = a.spec.dataset?.avgTextChars ?? 1000;
  const tokenBytes = 16 * a.sequenceTokens;
  const rowBytes = a.rowsPerInputRow * (textBytes + tokenBytes + a.outputBytesPerRow);
  const settings = a.rowsPerInputRow > 1 ? `${a.rowsPerInputRow} sweep settings x ` : "";
  log.decide(
    "data.bytesPerRowInFlight",
    rowBytes,
    `${settings}(${textBytes} B of text + ${tokenBytes} B of token ids and mask (2 x int64 x ${a.sequenceTokens}) ` +
      `+ ${a.outputBytesPerRow} B of output)`,
  );
  return rowBytes;
}

/** Ray Data's default limit, and the largest block whose in-flight copies stay within its target share. */
function planBlocks(a: DataJobInput, pool: { actors: number; preprocess: number }, rowBytes: number, log: DecisionLog) {
  const nodes = a.shape.worker.replicas;
  const budget = Math.floor(nodes * a.shape.worker.objectStoreGiB * GIB * RAY_DATA_OBJECT_STORE_FRACTION);
  log.decide(
    "data.rayDataBudgetBytes",
    budget,
    `Ray Data's default limit: ${RAY_DATA_OBJECT_STORE_FRACTION * 100}% of the cluster's object store (${nodes} x ` +
      `${a.shape.worker.objectStoreGiB} GiB); Ray applies it, so it is not set`,
  );
  const inFlight = pool.preprocess + pool.actors * TASKS_IN_FLIGHT_PER_ACTOR;
  // Each in-flight block exists as input and output of its operator.
  const model = { blocksInFlight: 2 * inFlight, share: RAY_DATA_OBJECT_STORE_FRACTION * WORKING_SET_TARGET };
  const fitBlock = Math.floor((budget * WORKING_SET_TARGET) / model.blocksInFlight);
  const planned = Math.max(
    MIN_BLOCK_BYTES,
    Math.min(MAX_BLOCK_BYTES, fitBlock, Math.max(rowBytes, a.batchSizePerActor * rowBytes)),
  );
  const blockBytes = a.spec.blockSizeMiB === undefined ? planned : a.spec.blockSizeMiB * MIB;
  const rowsPerBlock = Math.max(1, Math.floor(blockBytes / rowBytes));
  const split = `${pool.preprocess} CPU tasks + ${pool.actors} actors x ${TASKS_IN_FLIGHT_PER_ACTOR} (Ray's default)`;
  const setBy =
    a.spec.blockSizeMiB === undefined ? "" : `set by the workload (blockSizeMiB); the plan's: ${planned} B = `;
  log.decide(
    "data.blockSizeBytes",
    blockBytes,
    `${setBy}min(128 MiB default, ${WORKING_SET_TARGET * 100}% of the limit / (2 x ${inFlight} blocks in flight: ` +
      `${split}), one GPU batch = ${a.batchSizePerActor} rows), at least 1 MiB: ${rowsPerBlock} rows per ` +
      `block`,
  );
  const workingSet = model.blocksInFlight * blockBytes;
  log.decide(
    "data.workingSetBytes",
    workingSet,
    `2 x ${inFlight} blocks x ${blockBytes} B = ${(workingSet / GIB).toFixed(2)} GiB <= ${(budget / GIB).toFixed(2)} ` +
      `GiB limit: nothing spills`,
  );
  return { budget, blockBytes, rowsPerBlock, workingSet, model };
}

/** Rows to read: dev reads a sample. */
function planRead(a: DataJobInput, log: DecisionLog) {
  const dev = a.environment === "dev";
  const sample = log.decide(
    "data.sampleFraction",
    dev ? a.spec.devSampleFraction : 1,
    dev ? "dev reads a sample of the data (devSampleFraction)" : "prod reads the whole dataset",
  );
  const rows = a.spec.dataset?.rows === undefined ? undefined : Math.max(1, Math.ceil(a.spec.dataset.rows * sample));
  return { sample, rows };
}

/** Tunes Ray Data and the GPU actor pool of an embedding or batch-inference job. */
export function tuneData(a: DataJobInput, sweep?: SweepSection): DataJobTuning {
  const log = new DecisionLog();
  const pool = planPool(a, log);
  const rowBytes = rowBytesInFlight(a, log);
  const blocks = planBlocks(a, pool, rowBytes, log);
  if (blocks.workingSet > blocks.budget) {
    const set = a.spec.blockSizeMiB;
    const message =
      `the Ray Data working set (${blocks.workingSet} B) would exceed its object-store limit (${blocks.budget} ` +
      `B) and spill: ${set === undefined ? "use nodes with more memory" : "set a smaller block size or leave it out"}`;
    const at =
      set === undefined
        ? { path: `${a.path}.gpus`, value: a.spec.gpus }
        : { path: `${a.path}.blockSizeMiB`, value: set };
    throw new ConfigError([{ ...at, message }]);
  }
  const read = planRead(a, log);
  const data: DataTuning = {
    uri: a.spec.dataset?.uri,
    format: a.spec.dataset?.format,
    sampleFraction: read.sample,
    rowsToRead: read.rows,
    blockSizeBytes: blocks.blockBytes,
    rowsPerBlock: blocks.rowsPerBlock,
    workingSetBytes: blocks.workingSet,
  };
  const actorPool: ActorPoolSection = {
    actorPoolSize: pool.actors,
    gpusPerActor: a.gpusPerActor,
    batchSize: a.batchSizePerActor,
    preprocessConcurrency: pool.preprocess,
  };
  return {
    engine: "ray-data",
    data: { data, pool: actorPool, sweep },
    workingSetModel: blocks.model,
    decisions: log.decisions,
  };
}

/** The data and actor-pool sections of the document: the tuning, with the output location. */
export function dataSections(
  tuning: DataJobTuning,
  outputUri: string,
): { data: DataSection; actorPool: ActorPoolSection } {
  return { data: { ...tuning.data.data, outputUri }, actorPool: tuning.data.pool };
}
