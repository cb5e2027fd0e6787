/** The forecast's types: the GPU and link figures it reads, a step's breakdown, and a job's forecast. */

/** What bounds a job: the stage whose time the forecast's wall time follows. */
export const FORECAST_BOUNDS = ["gpu-compute", "gpu-memory", "interconnect", "network", "cpu-preprocessing"] as const;
/** One of {@link FORECAST_BOUNDS}. */
export type ForecastBound = (typeof FORECAST_BOUNDS)[number];

/** What each bound means, as the plan prints it. */
export const BOUND_TEXT: { readonly [B in ForecastBound]: string } = {
  "gpu-compute": "GPU compute (tensor-core FLOPs)",
  "gpu-memory": "GPU memory bandwidth (weights and states read per step)",
  interconnect: "the GPUs' PCIe links (collectives within a node)",
  network: "the network between nodes (collectives across nodes)",
  "cpu-preprocessing": "CPU preprocessing (tokenizing for the GPU actors)",
};

/** One GPU's figures the forecast reads (the pool's `node`, or a published run's GPU). */
export interface GpuFigures {
  readonly denseBf16Tflops: number;
  readonly memoryBandwidthGBps: number;
}

/** How NCCL crosses nodes: TCP sockets over ENA, or libfabric's EFA provider through aws-ofi-nccl. */
export const TRANSPORTS = ["tcp", "efa"] as const;
/** One of {@link TRANSPORTS}. */
export type Transport = (typeof TRANSPORTS)[number];

/** One size and network of a training job's step (./scaling.ts). */
export interface ScalingPoint {
  readonly gpus: number;
  readonly nodes: number;
  readonly transport: Transport;
  /** Micro-batches per GPU per step at this size, for the same global batch. */
  readonly gradientAccumulation: number;
  readonly stepSeconds: number;
  /** Share of the step the GPUs compute (DCGM's GPU_UTIL reads at least this). */
  readonly gpuUtilization: number;
  /** Collectives' seconds over the step's, hidden or not (across nodes, the all-reduce over the network). */
  readonly allReduceShare: number;
  /** Samples per second of the whole job. */
  readonly samplesPerSecond: number;
}

/** Bandwidth a collective gets, GB/s, within a node and between nodes. */
export interface Links {
  readonly intraNodeGBps: number;
  readonly interNodeGBps: number;
}

/** A unit of work (a training step, a batch) split into what keeps the GPUs busy and what they wait for. */
export interface StepBreakdown {
  /** Seconds the GPUs run kernels that compute or stream memory. */
  readonly busySeconds: number;
  /** Seconds the GPUs wait on top (exposed communication, starved by the CPUs). */
  readonly waitSeconds: number;
  /** Seconds of collectives, hidden or not. */
  readonly communicationSeconds: number;
  readonly bound: ForecastBound;
}

/** What a job's work is counted in: a training job's optimizer steps, a pipeline's rows, vLLM's requests. */
export const WORK_UNITS = ["optimizer steps", "rows", "requests"] as const;
/** One of {@link WORK_UNITS}. */
export type WorkUnit = (typeof WORK_UNITS)[number];

/** How much work a job does, as the forecast read it from the spec. */
export interface ForecastWork {
  readonly unit: WorkUnit;
  readonly count: number;
  /** The sentence the plan prints: where the count comes from. */
  readonly from: string;
}

/** A job's forecast: wall time, GPU-hours, cost, predicted GPU utilization and what bounds it. */
export interface Forecast {
  readonly work: ForecastWork;
  /** From the job's Ray workers starting to its end: startup and the work (node provisioning and queueing excluded). */
  readonly wallSeconds: number;
  readonly startupSeconds: number;
  /** GPUs times wall time, hours. */
  readonly gpuHours: number;
  /** The job's GPU nodes for the wall time at the pool's on-demand price (its dearest size), USD. */
  readonly costUsd: number;
  /** On spot capacity the price varies below the on-demand one: `costUsd` is then an upper bound. */
  readonly costIsUpperBound: boolean;
  /** Share of the wall time the GPUs compute, in (0, 1]: DCGM's GPU_UTIL also counts collectives, so reads at least this. */
  readonly gpuUtilization: number;
  readonly bound: ForecastBound;
  /** Seconds of one step of the work: a training step, a GPU batch over every GPU, a vLLM decode step. */
  readonly unitSeconds: number;
  /** Share of the work's time spent waiting on collectives or CPUs. */
  readonly waitShare: number;
  /**
   * A training job's step at 8, 16 and 32 GPUs and its own count, over TCP and (on an EFA-capable pool) EFA.
   * @default - none: the other kinds
   */
  readonly scaling?: readonly ScalingPoint[];
}

/** A forecast, or why the plan cannot make one. */
export type ForecastResult =
  | { readonly forecast: Forecast; readonly unavailable?: undefined }
  | { readonly forecast?: undefined; readonly unavailable: string };
