"""The probes Ray's workers run in the lever checks. Kept free of the harness (no signal handlers, no cluster code)
because every Ray worker process imports this module to unpickle them. None sleeps or reads a clock: what they
record is what Ray handed them."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


class Probe:
    """A GPU actor stand-in. On start it writes a marker file naming its process and the GPU ids Ray assigned it
    (so the check counts the actors Ray started, not only those that got work); per batch it records its rows."""

    def __init__(self, marker_dir: str) -> None:
        import ray

        self.pid = os.getpid()
        gpus = ",".join(str(g) for g in ray.get_gpu_ids())
        with open(os.path.join(marker_dir, f"actor-{self.pid}"), "w", encoding="utf-8") as f:
            f.write(gpus)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        n = len(batch["id"])
        return {"pid": np.full(n, self.pid), "rows": np.full(n, n)}


def started_actors(marker_dir: str) -> dict[int, list[str]]:
    """The actors a Probe run started: process id to the GPU ids Ray assigned it."""
    found = {}
    for name in os.listdir(marker_dir):
        with open(os.path.join(marker_dir, name), encoding="utf-8") as f:
            found[int(name.split("-")[1])] = [g for g in f.read().split(",") if g]
    return found


def tokenize_stand_in(batch: dict[str, Any]) -> dict[str, Any]:
    """A tokenizer stand-in: records the process each batch ran in."""
    n = len(batch["id"])
    return {"id": batch["id"], "pid": np.full(n, os.getpid())}
