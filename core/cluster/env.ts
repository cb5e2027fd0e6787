/**
 * Environment variables that CUDA, PyTorch and NCCL read themselves, set on every GPU worker.
 *
 * Sources: PyTorch CUDA semantics (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, recommended by PyTorch's
 * own OOM message); NCCL environment docs (`NCCL_SOCKET_IFNAME`, `NCCL_DEBUG`); NVIDIA/nccl
 * `src/transport/net_socket.cc` (socket threads auto-tune only when the interface is the ENA PCI device, which a
 * pod's veth is not); aws/aws-ofi-nccl `doc/efa-env-var.md` (no socket tuning, no RDMA variables on EFA without
 * GPUDirect, which g5 lacks). See `shared/facts/ray-tuning.md` and docs/platform.md, "EFA".
 */
import type { Environment } from "../config/stack";
import type { DecisionLog } from "../decisions";
import { ENVIRONMENT_PROFILES } from "../environments";

/**
 * The name NCCL_NET asks NCCL for: aws-ofi-nccl's network. Versions up to 1.11.0 named it "AWS Libfabric"; later ones
 * "Libfabric", and answer to "AWS Libfabric" too when NCCL_NET says so (aws/aws-ofi-nccl `nvidia_plugin_name_fixup`).
 */
export const EFA_NCCL_NET = "AWS Libfabric";

/** Sets one variable with its reason. */
type SetVariable = (name: string, value: string, reason: string) => void;

/** NCCL's transport across nodes: EFA's libfabric provider, or the socket tuning of TCP over ENA. */
function transportEnv(args: { efa: boolean; multiNode: boolean }, set: SetVariable): void {
  if (args.efa) {
    set(
      "FI_PROVIDER",
      "efa",
      "the job's workers have the node's EFA interface: libfabric uses its EFA provider, never a slower fallback",
    );
    set(
      "NCCL_NET",
      EFA_NCCL_NET,
      "NCCL must use aws-ofi-nccl (libfabric) between nodes: an image without the plugin then fails at NCCL's start " +
        "instead of running silently on TCP sockets (the plugin answers to this name in every version)",
    );
  } else if (args.multiNode) {
    set(
      "NCCL_SOCKET_NTHREADS",
      "2",
      "TCP over ENA: NCCL's AWS socket tuning only fires on the ENA PCI device, not a pod's veth, so set " +
        "it explicitly (2 threads x 8 sockets)",
    );
    set("NCCL_NSOCKS_PERTHREAD", "8", "TCP over ENA: 8 sockets per thread, product 16 <= NCCL's 64-socket limit");
  }
}

/** Builds the worker environment and records why each variable is set. */
export function workerEnv(args: {
  environment: Environment;
  multiNode: boolean;
  efa: boolean;
  /** The GPU the worker's memory is planned on (its pool's least), and what CUDA hands out of it, GiB. */
  gpu: { readonly name: string; readonly usableGiB: number };
  log: DecisionLog;
}): Record<string, string> {
  const { log } = args;
  const env: Record<string, string> = {};
  const set: SetVariable = (name, value, reason) => {
    env[name] = log.decide(`env.${name}`, value, reason);
  };
  set(
    "PYTORCH_CUDA_ALLOC_CONF",
    "expandable_segments:True",
    "lets the caching allocator grow segments instead of fragmenting, the fix PyTorch's OOM message suggests; " +
      `${args.gpu.name} has only ~${Math.round(args.gpu.usableGiB)} GiB`,
  );
  set(
    "NCCL_SOCKET_IFNAME",
    "eth0",
    "pins NCCL bootstrap and socket traffic to the pod interface; a wrong interface hangs multi-node jobs (ray-project/ray#26663)",
  );
  transportEnv(args, set);
  const debug = ENVIRONMENT_PROFILES[args.environment].ncclDebug;
  if (debug)
    set(
      "NCCL_DEBUG",
      debug,
      `${args.environment} logs NCCL warnings; prod leaves NCCL_DEBUG unset as NCCL's docs advise`,
    );
  return env;
}
