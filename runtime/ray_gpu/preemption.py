"""Checkpoint on a spot interruption notice, with Ray's own drain signal (Ray 2.58).

On a spot worker pod the rendered preStop hook writes the notice (the deadline, epoch seconds) into
``$RAY_GPU_NOTICE_DIR/notice`` and waits for ``checkpointed`` before it runs ``ray stop``
(``workloads/raycluster/preemption.ts``). In each training worker:

- :class:`NoticeWatcher` (a thread, one file check a second) sees the notice and asks Ray Core to drain its node
  for preemption with that deadline, as ``ray drain-node --reason DRAIN_NODE_REASON_PREEMPTION`` does;
- Ray Train's preemption watcher (on by default in Ray 2.58, polling Ray Core's draining nodes every 5 s) tells every
  worker; the loop asks :meth:`Preemption.noticed` once per optimizer step (``ray.train.get_preemption_info()``, a
  barrier: every rank asks at the same step, so all see the notice at the same step);
- the loop then checkpoints the step it just finished (model, optimizer, data position), and calls
  :meth:`Preemption.after_checkpoint`: once Ray Train has registered the checkpoint, a worker of a node being
  preempted writes ``checkpointed``, and every worker stops training and waits. The hook stops Ray on that node;
  Ray Train counts the loss of its workers as a preemption (``FailureConfig.max_preemption_failures``, apart from
  ``max_failures``) and, at the deadline, restarts the run from that checkpoint on the nodes it has.

Outside a spot pod (no ``RAY_GPU_NOTICE_DIR``) nothing is watched, and :meth:`Preemption.noticed` still reports a
drain Ray sees by other means (the autoscaler's).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("ray_gpu")

#: The notice folder's variable and its files: one contract with ``workloads/raycluster/preemption.ts``.
NOTICE_DIR_ENV = "RAY_GPU_NOTICE_DIR"
NOTICE_FILES = {"notice": "notice", "training": "training", "checkpointed": "checkpointed"}
#: Seconds between two looks for the notice.
NOTICE_POLL_S = 1.0
#: Ray Core's drain reason for a node about to be taken away (autoscaler.proto, DrainNodeReason).
DRAIN_REASON = "DRAIN_NODE_REASON_PREEMPTION"


def notice_dir() -> str | None:
    return os.environ.get(NOTICE_DIR_ENV) or None


def _path(directory: str, name: str) -> str:
    return os.path.join(directory, NOTICE_FILES[name])


def read_deadline(directory: str) -> float | None:
    """The notice's deadline (epoch seconds), or None while there is no notice."""
    try:
        with open(_path(directory, "notice"), encoding="utf-8") as f:
            return float(f.read().strip())
    except (OSError, ValueError):
        return None


def drain_own_node(deadline_s: float, why: str) -> bool:
    """Asks the GCS to drain this worker's node for preemption, the node to be gone at ``deadline_s``; True when
    accepted. The same request ``ray drain-node`` makes (ray/scripts/scripts.py, Ray 2.58)."""
    import ray
    from ray.core.generated import autoscaler_pb2

    context = ray.get_runtime_context()
    gcs = ray._raylet.GcsClient(address=context.gcs_address)
    accepted, rejected_because = gcs.drain_node(
        context.get_node_id(), autoscaler_pb2.DrainNodeReason.Value(DRAIN_REASON), why, int(deadline_s * 1000)
    )
    if not accepted:
        log.warning("ray-gpu preemption: Ray did not accept draining this node: %s", rejected_because)
    return bool(accepted)


class NoticeWatcher:
    """Watches the notice folder from a daemon thread and drains this node once, when the notice comes."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        with open(_path(directory, "training"), "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))
        self._thread = threading.Thread(target=self._watch, name="ray-gpu-notice", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while (deadline := read_deadline(self.directory)) is None:
            time.sleep(NOTICE_POLL_S)
        print(
            f"ray-gpu preemption: notice received, node to be reclaimed in {max(0, round(deadline - time.time()))} s",
            flush=True,
        )
        drain_own_node(deadline, "spot interruption notice (ray-gpu preStop)")


@dataclass
class Preemption:
    """The training loop's view of an interruption: whether one is noticed, and what to do after its checkpoint."""

    rank: int
    local_rank: int
    watcher: NoticeWatcher | None = None

    @classmethod
    def start(cls, rank: int, local_rank: int) -> Preemption:
        """Starts the notice watcher on the node's first worker when the pod has a notice folder."""
        directory = notice_dir()
        watcher = NoticeWatcher(directory) if directory and local_rank == 0 else None
        return cls(rank, local_rank, watcher)

    def noticed(self) -> Any:
        """Ray Train's preemption info once a node of the run is being drained, else None. Every rank calls it at
        every optimizer step (Ray Train requires the same number of calls on every rank)."""
        import ray.train

        return ray.train.get_preemption_info()

    def after_checkpoint(self, step: int, info: Any) -> None:
        """Once Ray Train has registered the checkpoint of ``step``: on a preempted node, tells the preStop hook;
        then waits for the end (the hook stops Ray on the preempted node; Ray Train restarts the run at the
        deadline). Never returns."""
        import ray
        import ray.train

        ray.train.get_all_reported_checkpoints()  # blocks until the controller registered every report
        directory = notice_dir()
        here = ray.get_runtime_context().get_node_id()
        if directory and self.local_rank == 0 and here in info.preempted_node_to_ranks:
            with open(_path(directory, "checkpointed") + ".tmp", "w", encoding="utf-8") as f:
                f.write(str(step))
            os.replace(_path(directory, "checkpointed") + ".tmp", _path(directory, "checkpointed"))
        print(
            f"ray-gpu preemption: rank {self.rank}: checkpoint of step {step} registered; nodes being reclaimed: "
            f"{sorted(info.preempted_node_to_ranks)}; waiting for Ray Train to restart the run",
            flush=True,
        )
        while True:
            time.sleep(3600)
