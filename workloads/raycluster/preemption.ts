/**
 * The worker pod's part in checkpointing on a spot interruption notice: a grace period as long as the notice, and a
 * preStop hook that hands the notice to the job before Ray stops.
 *
 * Kubernetes runs the preStop hook when the pod is deleted (an EKS drain evicts it), and sends SIGTERM only once the
 * hook returns; `terminationGracePeriodSeconds` counts from the hook's start ("Container Lifecycle Hooks", "Pod
 * Lifecycle: Termination of Pods"). Ray's container ignores SIGTERM as a bare `ray stop` preStop would leave it, so
 * the hook is the only moment the job hears of the interruption. The hook:
 * 1. writes `notice` (the deadline, epoch seconds) into {@link NOTICE_DIR}; the runtime's notice watcher in each
 *    training worker (`ray_gpu.preemption`) asks Ray Core to drain its node for preemption with that deadline, and
 *    Ray Train tells every worker;
 * 2. when a training worker runs on the node (it wrote `training`), waits for `checkpointed`, which the loop writes
 *    once Ray Train has registered the checkpoint of the step it was in, at most the grace less a margin;
 * 3. runs `ray stop`, as before.
 * The file names are a contract with `runtime/ray_gpu/preemption.py` (a test checks they agree).
 */
import { SPOT_WORKER_GRACE_SECONDS, STOP_MARGIN_SECONDS } from "../../core/reliability/interruption";
import type { Volume, VolumeMount } from "../k8s/types";

/** Where the hook and the job's workers meet: an emptyDir of the worker pod. */
export const NOTICE_DIR = "/var/run/ray-gpu";
/** The variable that tells the runtime where {@link NOTICE_DIR} is. */
export const NOTICE_DIR_ENV = "RAY_GPU_NOTICE_DIR";
/** Files in it: the notice (deadline), a training worker's presence, and its checkpoint of the notice. */
export const NOTICE_FILES = { notice: "notice", training: "training", checkpointed: "checkpointed" } as const;

const VOLUME = "ray-gpu-notice";

/**
 * The label of worker pods that checkpoint on a notice. The job's PodDisruptionBudget leaves them out, so a drain
 * (EKS's on a spot notice or rebalance recommendation, a node group update) evicts them and their hook runs; the head
 * and the submitter stay held.
 */
export const EVICT_ON_NOTICE_LABEL = { key: "ray-gpu.io/evict", value: "on-notice" } as const;

/** The hook's shell script (POSIX sh, only `date`, `mv`, `sleep` and `ray`). */
export function noticeScript(graceSeconds: number = SPOT_WORKER_GRACE_SECONDS): string {
  const waitSeconds = graceSeconds - STOP_MARGIN_SECONDS;
  const f = NOTICE_FILES;
  return [
    `d="$${NOTICE_DIR_ENV}"`,
    `echo $(( $(date +%s) + ${graceSeconds} )) > "$d/${f.notice}.tmp" && mv "$d/${f.notice}.tmp" "$d/${f.notice}"`,
    `if [ -e "$d/${f.training}" ]; then i=0`,
    `  while [ ! -e "$d/${f.checkpointed}" ] && [ "$i" -lt ${waitSeconds} ]; do sleep 1; i=$((i+1)); done`,
    `  if [ -e "$d/${f.checkpointed}" ]; then echo "ray-gpu preStop: checkpointed after $i s"; ` +
      `else echo "ray-gpu preStop: no checkpoint within ${waitSeconds} s"; fi`,
    "fi",
    "ray stop",
  ].join("\n");
}

/** What a spot worker pod adds: grace, hook, the notice folder and its variable. */
export interface NoticeParts {
  readonly terminationGracePeriodSeconds: number;
  readonly lifecycle: { readonly preStop: { readonly exec: { readonly command: string[] } } };
  readonly volume: Volume;
  readonly mount: VolumeMount;
  readonly env: Readonly<Record<string, string>>;
  /** The pod's {@link EVICT_ON_NOTICE_LABEL}. */
  readonly labels: Readonly<Record<string, string>>;
}

/** The parts of a worker pod on spot capacity. */
export function noticeParts(): NoticeParts {
  return {
    terminationGracePeriodSeconds: SPOT_WORKER_GRACE_SECONDS,
    lifecycle: { preStop: { exec: { command: ["/bin/sh", "-c", noticeScript()] } } },
    volume: { name: VOLUME, emptyDir: { sizeLimit: "1Mi" } },
    mount: { name: VOLUME, mountPath: NOTICE_DIR },
    env: { [NOTICE_DIR_ENV]: NOTICE_DIR },
    labels: { [EVICT_ON_NOTICE_LABEL.key]: EVICT_ON_NOTICE_LABEL.value },
  };
}
