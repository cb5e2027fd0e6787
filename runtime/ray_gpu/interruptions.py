"""Interruption hooks of the end-to-end tests: the points inside a job where a test interrupts it, so the
interruption lands at a known place whatever the machine's load, instead of racing a watcher outside the job. None
is ever set in a real job; each logs a warning when it acts.

- :data:`KILL_AFTER_CHECKPOINT_ENV` (``RAY_GPU_TEST_KILL_AFTER_CHECKPOINT_STEP=N``): in a training run that started
  from the beginning, the rank-0 worker, once Ray Train has registered its checkpoint of step ``N``
  (``ray.train.get_all_reported_checkpoints`` returns only after the controller has processed every report and
  written its snapshot), kills its own process with SIGKILL, as a lost node would.
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


def _count(name: str) -> int | None:
    value = os.environ.get(name)
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name}={value!r}: expected a positive whole number (a test hook)")
    return int(value)


def kill_step() -> int | None:
    """The step :data:`KILL_AFTER_CHECKPOINT_ENV` names, read where the job starts (the driver: Ray Train's workers
    do not see the driver's environment), for the training loop's config."""
    return _count(KILL_AFTER_CHECKPOINT_ENV)


def kill_after_checkpoint(step: int, rank: int, resumed_from: int | None, target: int | None) -> None:
    """Called by the training loop after it reported the checkpoint of ``step``: kills this worker when ``target``
    (:func:`kill_step`) is that step, on rank 0 of a run that started from the beginning (a resumed run goes on)."""
    if target is None or step != target or rank != 0 or resumed_from is not None:
        return
    import ray.train

    registered = ray.train.get_all_reported_checkpoints()  # blocks until the controller registered every report
    log.warning(
        "%s=%d: test hook, killing this worker (pid %d); Ray Train registered %d checkpoints", KILL_AFTER_CHECKPOINT_ENV, step, os.getpid(), len(registered)
    )
    os.kill(os.getpid(), signal.SIGKILL)


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
    blocks = _count(HOLD_WRITE_AFTER_BLOCKS_ENV)
    if blocks is None:
        return ds
    import ray.data

    log.warning("%s=%s: test hook, the write holds every block after the first %d until the job is killed", HOLD_WRITE_AFTER_BLOCKS_ENV, blocks, blocks)
    return ds.map_batches(
        HoldAfter, fn_constructor_kwargs={"blocks": blocks}, compute=ray.data.ActorPoolStrategy(size=1), batch_size=None, batch_format="pyarrow"
    )
