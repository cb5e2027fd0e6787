"""The records a job prints for the end-to-end checks: each a fixed text and one JSON value on a line of its log
(``RAY_GPU_APPLIED {...}``, ``ray-gpu example: ran with {...}``, ``ray-gpu example: resumed from checkpoint at step 5``).
Ray prefixes the workers' lines (``(RayTrainWorker pid=...)``, colours, progress bars), so the text may start
anywhere on a line; the value is read with ``json``, from just after the text, and whatever follows it is ignored."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ray_gpu.tuning import REPORT_PREFIX

#: Every value the runtime handed to Ray or a library (``Tuning.report``): ``{"applied": [...]}``.
APPLIED = REPORT_PREFIX
#: The training driver: what the workers ran, as PyTorch and Ray Train counted it (``ray_gpu.examples.driver``).
RAN_WITH = "ray-gpu example: ran with "
#: Rank 0 of a training run that Ray Train started from a checkpoint: the checkpoint's step.
RESUMED_AT_STEP = "ray-gpu example: resumed from checkpoint at step "
#: Each training worker at each checkpoint: its data position and the rows it trained on since the previous one.
POSITION_AT_CHECKPOINT = "ray-gpu example: data position at checkpoint "
#: Each training worker resumed from a checkpoint: where its data continues.
RESUMED_POSITION = "ray-gpu example: resumed data position "
#: Each training worker as its loop starts: rank, world size, Ray node and transport environment (``multinode.py``).
WORKER_STARTED = "ray-gpu example: worker started "
#: The spill check's unbounded control (``unbounded.py``): the bytes it held at once.
UNBOUNDED = "UNBOUNDED "

_DECODER = json.JSONDecoder()


def values_in(lines: Iterable[str], prefix: str) -> list[Any]:
    """The JSON value after ``prefix`` on every line that has it, in order."""
    found = []
    for line in lines:
        _, seen, rest = line.partition(prefix)
        if seen:
            found.append(_DECODER.raw_decode(rest)[0])
    return found


def records(logs: Iterable[str], prefix: str) -> list[Any]:
    """The JSON values after ``prefix`` in the job logs ``logs`` (paths), in order."""
    found = []
    for log in logs:
        with open(log, encoding="utf-8", errors="replace") as f:
            found += values_in(f, prefix)
    return found


def last(log: str, prefix: str) -> Any | None:
    """The last JSON value after ``prefix`` in the job log ``log``, None when there is none."""
    found = records([log], prefix)
    return found[-1] if found else None
