"""The probes Ray's workers run in the lever experiments. Kept free of the harness (no signal handlers, no cluster
code) because every Ray worker process imports this module to unpickle them."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

#: Seconds one tokenizing batch takes: long enough that process start-up does not decide how many run at once.
TOKENIZE_SECONDS = 1.0


class Probe:
    """A GPU actor stand-in. On start it writes a marker file naming its process and the GPU ids Ray assigned it
    (so the experiment counts the actors Ray started, not only those that got work); per batch it records its rows."""

    def __init__(self, marker_dir: str) -> None:
        import ray

        self.pid = os.getpid()
        gpus = ",".join(str(g) for g in ray.get_gpu_ids())
        with open(os.path.join(marker_dir, f"actor-{self.pid}"), "w", encoding="utf-8") as f:
            f.write(gpus)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.02)
        n = len(batch["id"])
        return {"pid": np.full(n, self.pid), "rows": np.full(n, n)}


def started_actors(marker_dir: str) -> dict[int, list[str]]:
    """The actors a Probe run started: process id to the GPU ids Ray assigned it."""
    found = {}
    for name in os.listdir(marker_dir):
        with open(os.path.join(marker_dir, name), encoding="utf-8") as f:
            found[int(name.split("-")[1])] = [g for g in f.read().split(",") if g]
    return found


def tokenize_probe(batch: dict[str, Any]) -> dict[str, Any]:
    """A tokenizer stand-in: takes TOKENIZE_SECONDS per batch and records when, and in which process, it ran."""
    t0 = time.time()
    time.sleep(TOKENIZE_SECONDS)
    n = len(batch["id"])
    return {"pid": np.full(n, os.getpid()), "t0": np.full(n, t0), "t1": np.full(n, time.time())}


def warm(seconds: float) -> int:
    """A task that holds a worker process for ``seconds`` (run many at once to start Ray's worker pool)."""
    time.sleep(seconds)
    return os.getpid()


#: Seconds one GPU-actor batch takes in the idle experiment, and one preprocessing batch feeding it.
ACTOR_SECONDS = 1.0
PREPROCESS_SECONDS = 2.0


def preprocess_sleep(batch: dict[str, Any]) -> dict[str, Any]:
    """A tokenizer stand-in that keeps the rows' ids: PREPROCESS_SECONDS per batch."""
    time.sleep(PREPROCESS_SECONDS)
    return {"id": batch["id"]}


class TimedProbe:
    """A GPU actor stand-in timed by the runtime's telemetry (ray_gpu.telemetry.ActorTelemetry): each output row
    carries its actor's busy and idle seconds so far, so the experiment reads the busy fraction from the run itself."""

    def __init__(self) -> None:
        from ray_gpu.telemetry import ActorTelemetry

        self.pid = os.getpid()
        self.telemetry = ActorTelemetry("levers-embed", actor=str(self.pid), emit=lambda _: None)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        n = len(batch["id"])
        self.telemetry.call(lambda: time.sleep(ACTOR_SECONDS), rows=n)
        t = self.telemetry
        return {"pid": np.full(n, self.pid), "busy": np.full(n, t.busy_seconds), "idle": np.full(n, t.idle_seconds)}
