/**
 * DeepSpeed's model-state memory estimators, ported from its current code (deepspeedai/DeepSpeed
 * `deepspeed/runtime/zero/stage_1_and_2.py` `estimate_zero2_model_states_mem_needs` and
 * `deepspeed/runtime/zero/stage3.py` `estimate_zero3_model_states_mem_needs`; the ZeRO-2 formula is the one after
 * PR #5099, `2·P + 18·P/N`, not the older `4·P + 16·P/N` that `docs/code-docs/source/memory.rst` still prints).
 * Bytes, integer-truncated exactly as the Python does.
 */

/**
 * Bucket size we configure (elements; 16-bit, so 2 bytes each) instead of DeepSpeed's 5e8. With `overlap_comm`
 * DeepSpeed double-buffers its reduce bucket, so ZeRO holds about 2 × 2e8 × 2 B = 0.8 GB of buckets per GPU,
 * which the memory plan counts.
 */
export const DEEPSPEED_BUCKET_ELEMENTS = 200_000_000;
export const DEEPSPEED_BUCKET_BYTES = 2 * DEEPSPEED_BUCKET_ELEMENTS * 2;

/** Result of an estimator: bytes per GPU and per node CPU. */
export interface DeepSpeedEstimate {
  readonly gpuBytes: number;
  readonly cpuBytes: number;
}

/**
 * ZeRO-2 model states per GPU. `2` = 16-bit params; `18` = 16-bit grads 2 + fp32 grads 4 + fp32 params 4 +
 * optimizer states 8 (momentum and variance), sharded over all GPUs.
 */
export function zero2ModelStates(args: {
  totalParams: number;
  gpusPerNode: number;
  nodes: number;
  cpuOffload: boolean;
  additionalBufferFactor?: number;
}): DeepSpeedEstimate {
  const { totalParams: p, gpusPerNode, nodes, cpuOffload } = args;
  const buffer = args.additionalBufferFactor ?? 1.5;
  const totalGpus = nodes * gpusPerNode;
  if (cpuOffload) {
    return { gpuBytes: Math.trunc(2 * p), cpuBytes: Math.trunc(p * Math.max(4 * totalGpus, 16) * buffer) };
  }
  return {
    gpuBytes: Math.trunc(2 * p + Math.trunc((18 * p) / totalGpus)),
    cpuBytes: Math.trunc(p * 4 * gpusPerNode * buffer),
  };
}

/** ZeRO-3 model states per GPU: the largest layer gathered (4 bytes/param) plus shards of everything. */
export function zero3ModelStates(args: {
  totalParams: number;
  largestLayerParams: number;
  gpusPerNode: number;
  nodes: number;
  cpuOffload: boolean;
  cpuOffloadParams: boolean;
  zeroInit?: boolean;
  additionalBufferFactor?: number;
}): DeepSpeedEstimate & { readonly largestLayerBytes: number } {
  const { totalParams: p, largestLayerParams: ll, gpusPerNode, nodes, cpuOffload, cpuOffloadParams } = args;
  const zeroInit = args.zeroInit ?? true;
  const buffer = args.additionalBufferFactor ?? 1.5;
  const totalGpus = nodes * gpusPerNode;
  const gpusFactor = 1 / nodes;
  const largestLayerBytes = 4 * ll;
  let gpu: number;
  let cpu: number;
  if (cpuOffload) {
    if (cpuOffloadParams) {
      gpu = largestLayerBytes;
      cpu = zeroInit ? p * 18 * gpusFactor * buffer : p * Math.max(4 * gpusPerNode, 18 * gpusFactor) * buffer;
    } else {
      gpu = largestLayerBytes + Math.trunc((2 * p) / totalGpus);
      cpu = zeroInit ? p * 16 * gpusFactor * buffer : p * Math.max(4 * gpusPerNode, 16 * gpusFactor) * buffer;
    }
  } else {
    gpu = largestLayerBytes + Math.trunc((18 * p) / totalGpus);
    cpu = zeroInit ? ll * 4 * gpusPerNode * buffer : p * 4 * gpusPerNode * buffer;
  }
  return { gpuBytes: Math.trunc(gpu), cpuBytes: Math.trunc(cpu), largestLayerBytes };
}
