"""Interruption hooks of the end-to-end tests: the points inside a job where a test interrupts it, so the
interruption lands at a known place whatever the machine's load, instead of racing a watcher outside the job. None
is ever set in a real job; each logs a warning when it acts.

- :data:`KILL_AFTER_CHECKPOINT_ENV` (``RAY_GPU_TEST_KILL_AFTER_CHECKPOINT_STEP=N``): in a training run that started
  from the beginning, the rank-0 worker, once Ray Train has registered its checkpoint of step ``N``
  (``ray.train.get_all_reported_checkpoints`` returns only after the controller has processed every report and
  written its snapshot), kills its own process with SIGKILL, as a lost node would.
- :data:`NOTICE_MID_STEP_ENV` (``RAY_GPU_TEST_NOTICE_MID_STEP=N``): in a training run that started from the
  beginning, the rank-0 worker, in the middle of step ``N`` (its first micro-batch computed, the optimizer not yet
  stepped), prints where it is (``MID_STEP``: node and notice folder) and waits until the spot interruption notice
  is in its node's notice folder and Ray Train has told it of the drain; the test delivers the notice as the
  kubelet would (the pod's preStop hook), so the notice lands inside that step whatever the machine's load.
- :data:`HOLD_WRITE_AFTER_BLOCKS_ENV` (``RAY_GPU_TEST_HOLD_WRITE_AFTER_BLOCKS=N``): :func:`ray_gpu.write_parquet`
  passes its blocks one at a time through one actor that lets ``N`` of them through to the writer and holds the
  next one until the job is killed, so a test can kill a job while exactly ``N`` parts of its output are written.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any

log = logging.getLogger("ray_gpu")

KILL_AFTER_CHECKPOINT_ENV = "RAY_GPU_TEST_KILL_AFTER_CHECKPOINT_STEP"
HOLD_WRITE_AFTER_BLOCKS_ENV = "RAY_GPU_TEST_HOLD_WRITE_AFTER_BLOCKS"
NOTICE_MID_STEP_ENV = "RAY_GPU_TEST_NOTICE_MID_STEP"
#: What the rank-0 worker prints in the middle of the hook's step, then a JSON object: step, node, noticeDir.
MID_STEP = "ray-gpu test: mid-step "
#: How long the hook waits for the notice before it fails the run (a hang guard, never a verdict).
NOTICE_WAIT_GUARD_S = 600


def positive_count(name: str) -> int | None:
    """The whole number ≥ 1 a test hook's variable ``name`` holds, or None when it is unset; anything else is refused."""
    value = os.environ.get(name)
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name}={value!r}: expected a positive whole number (a test hook)")
    return int(value)


def kill_step() -> int | None:
    """The step :data:`KILL_AFTER_CHECKPOINT_ENV` names, read where the job starts (the driver: Ray Train's workers
    do not see the driver's environment), for the training loop's config."""
    return positive_count(KILL_AFTER_CHECKPOINT_ENV)


def kill_after_checkpoint(step: int, rank: int, resumed_from: int | None, target: int | None) -> None:
    """Called by the training loop after it reported the checkpoint of ``step``: kills this worker when ``target``
    (:func:`kill_step`) is that step, on rank 0 of a run that started from the beginning (a resumed run goes on)."""
    if target is None or step != target or rank != 0 or resumed_from is not None:
        return
    import ray.train

    registered = ray.train.get_all_reported_checkpoints()  # blocks until the controller registered every report
    log.warning(
        "%s=%d: test hook, killing this worker (pid %d); Ray Train registered %d checkpoints",
        KILL_AFTER_CHECKPOINT_ENV,
        step,
        os.getpid(),
        len(registered),
    )
    os.kill(os.getpid(), signal.SIGKILL)


def notice_step() -> int | None:
    """The step :data:`NOTICE_MID_STEP_ENV` names, read where the job starts (the driver), for the loop's config."""
    return positive_count(NOTICE_MID_STEP_ENV)


def _told_of_drain() -> bool:
    """Whether Ray Train's preemption watcher has marked this worker (Ray 2.58 internals: the worker's context)."""
    from ray.train.v2._internal.execution.context import get_train_context

    return get_train_context().preemption_context.preemption_info is not None


def await_notice_mid_step(step: int, rank: int, resumed_from: int | None, target: int | None) -> None:
    """Called by the training loop in the middle of step ``step``: on rank 0 of a run that started from the beginning,
    when ``target`` (:func:`notice_step`) is that step, announces it and waits for the notice and Ray Train's drain
    signal, so the loop's next check sees the notice at the end of this step."""
    if target is None or step != target or rank != 0 or resumed_from is not None:
        return
    import json
    import time

    import ray

    from . import preemption

    directory = preemption.notice_dir()
    where = {"step": step, "node": ray.get_runtime_context().get_node_id(), "noticeDir": directory}
    log.warning(
        "%s=%d: test hook, waiting in the middle of step %d for the interruption notice",
        NOTICE_MID_STEP_ENV,
        step,
        step,
    )
    print(MID_STEP + json.dumps(where, sort_keys=True), flush=True)
    guard = time.monotonic() + NOTICE_WAIT_GUARD_S
    while not (directory and preemption.read_deadline(directory) is not None and _told_of_drain()):
        if time.monotonic() > guard:
            raise RuntimeError(
                f"{NOTICE_MID_STEP_ENV}: no notice and drain signal within {NOTICE_WAIT_GUARD_S} s (hang guard)"
            )
        time.sleep(0.2)


class HoldAfter:
    """A Ray Data actor that passes ``blocks`` blocks through and holds every later one until the job dies."""

    def __init__(self, blocks: int) -> None:
        self.blocks, self.passed = blocks, 0
        self.forever = threading.Event()

    def __call__(self, batch: Any) -> Any:
        if self.passed >= self.blocks:
            self.forever.wait()
        self.passed += 1
        return batch


def hold_write(ds: Any) -> Any:
    """The dataset as :func:`ray_gpu.write_parquet` writes it (on the driver, which reads the hook's variable):
    unchanged, or through :class:`HoldAfter` when the hook is set."""
    blocks = positive_count(HOLD_WRITE_AFTER_BLOCKS_ENV)
    if blocks is None:
        return ds
    import ray.data

    log.warning(
        "%s=%s: test hook, the write holds every block after the first %d until the job is killed",
        HOLD_WRITE_AFTER_BLOCKS_ENV,
        blocks,
        blocks,
    )
    return ds.map_batches(
        HoldAfter,
        fn_constructor_kwargs={"blocks": blocks},
        compute=ray.data.ActorPoolStrategy(size=1),
        batch_size=None,
        batch_format="pyarrow",
    )
