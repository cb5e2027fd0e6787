"""The timed probes Ray's workers run in ``npm run bench:ray``. Kept free of the harness, because every Ray worker
process of the bench's cluster imports this module to unpickle them."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

#: Seconds one tokenizing batch takes in the preprocessing-concurrency measure: long enough that process start-up
#: does not decide how many run at once.
TOKENIZE_SECONDS = 1.0
#: Seconds one GPU-actor batch takes in the idle measure, and one preprocessing batch feeding it.
ACTOR_SECONDS = 1.0
PREPROCESS_SECONDS = 2.0
#: Seconds one batch takes in the actor-pool measure's stand-in for a GPU model.
POOL_BATCH_SECONDS = 0.2


def tokenize_timed(batch: dict[str, Any]) -> dict[str, Any]:
    """A tokenizer stand-in: TOKENIZE_SECONDS per batch, recording when and in which process it ran."""
    t0 = time.time()
    time.sleep(TOKENIZE_SECONDS)
    n = len(batch["id"])
    return {"pid": np.full(n, os.getpid()), "t0": np.full(n, t0), "t1": np.full(n, time.time())}


def preprocess_sleep(batch: dict[str, Any]) -> dict[str, Any]:
    """A tokenizer stand-in that keeps the rows' ids: PREPROCESS_SECONDS per batch."""
    time.sleep(PREPROCESS_SECONDS)
    return {"id": batch["id"]}


class TimedProbe:
    """A GPU actor stand-in timed by the runtime's telemetry (ray_gpu.telemetry.ActorTelemetry): each output row
    carries its actor's busy and idle seconds so far, so the bench reads the idle fraction from the run itself."""

    def __init__(self) -> None:
        from ray_gpu.telemetry import ActorTelemetry

        self.pid = os.getpid()
        self.telemetry = ActorTelemetry("levers-embed", actor=str(self.pid), emit=lambda _: None)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        n = len(batch["id"])
        self.telemetry.call(lambda: time.sleep(ACTOR_SECONDS), rows=n)
        t = self.telemetry
        return {"pid": np.full(n, self.pid), "busy": np.full(n, t.busy_seconds), "idle": np.full(n, t.idle_seconds)}


class PoolProbe:
    """A GPU model stand-in for the actor-pool measure: POOL_BATCH_SECONDS a batch; each output row names its actor."""

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        time.sleep(POOL_BATCH_SECONDS)
        return {"pid": np.full(len(batch["id"]), os.getpid())}


#: Batches a DataLoader measure times, after the first (which waits for the loader's processes to start); seconds one
#: item takes to read (I/O, not CPU) and one training step over a batch of 16 items: reads take 3.2 times the step.
BATCHES = 40
READ_SECONDS = 0.01
STEP_SECONDS = 0.05


class SlowReads:
    """A map-style dataset whose items take READ_SECONDS each to read."""

    def __len__(self) -> int:
        return 16 * (BATCHES + 1)

    def __getitem__(self, i: int) -> int:
        time.sleep(READ_SECONDS)
        return i


def data_wait(workers: int) -> float:
    """Fraction of a loop's time spent waiting for the next batch, as the runtime's telemetry measures it in the
    training examples (ray_gpu.telemetry.StepTelemetry), after the first batch."""
    import itertools

    from torch.utils.data import DataLoader

    from ray_gpu.telemetry import StepTelemetry

    loader = iter(DataLoader(SlowReads(), batch_size=16, num_workers=workers))
    next(loader)
    telemetry = StepTelemetry("levers-train", emit=lambda _: None)
    for _ in telemetry.batches(itertools.islice(loader, BATCHES)):
        time.sleep(STEP_SECONDS)
        telemetry.step(samples=16)
    return round(telemetry.data_wait_fraction, 4)
