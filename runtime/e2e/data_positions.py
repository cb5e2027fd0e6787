"""The data positions of the kill-and-resume experiment (``test_resume.py``): where every worker's data stood at the
checkpoint the run resumed from, where it continued, and the rows it trained on either side.

The training loop (``ray_gpu.examples.checkpoints``) prints, per worker, its data position at every checkpoint with the
row ids it trained on since the previous one, and, once resumed, where its data continues (``job_log.py``)::

    ray-gpu example: data position at checkpoint {"rank": 0, "step": 5, "resumedFrom": null, "epoch": 0,
        "batchesInEpoch": 40, "lastRowIds": [..], "rowsSincePrevious": [[a, b], ..]}
    ray-gpu example: resumed data position {"rank": 0, "step": 5, "epoch": 0, "batch": 40,
        "recordedRowIds": [..], "lastSkippedRowIds": [..], "firstRowIds": [..]}

(each on one line in the log; wrapped here).

The tests check, for every worker: the resumed position is the checkpoint's; the last batch it skipped has the row
ids the checkpoint recorded (the order is the same); it then trains on new rows, none it had trained on before the
kill; and over all workers, the rows trained before the checkpoint and after the resume are each trained once, as
many as the run's steps take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from job_log import POSITION_AT_CHECKPOINT, RESUMED_POSITION, records


@dataclass(frozen=True)
class CheckpointPosition:
    """A worker's data position at a checkpoint, and the row ids it trained on since the previous checkpoint (or
    since it resumed from the checkpoint of step ``resumed_from``: None for a run from the beginning)."""

    rank: int
    step: int
    resumed_from: int | None
    epoch: int
    batches_in_epoch: int
    last_row_ids: list[int]
    #: Inclusive ranges of row ids: ``[[0, 2], [7, 8]]`` is rows 0, 1, 2, 7 and 8.
    rows_since_previous: list[list[int]]

    @classmethod
    def of(cls, r: dict[str, Any]) -> CheckpointPosition:
        return cls(
            r["rank"],
            r["step"],
            r["resumedFrom"],
            r["epoch"],
            r["batchesInEpoch"],
            r["lastRowIds"],
            r["rowsSincePrevious"],
        )

    def rows(self) -> list[int]:
        return [i for first, last in self.rows_since_previous for i in range(first, last + 1)]


@dataclass(frozen=True)
class ResumedPosition:
    """Where a resumed worker's data continued: the batch it skipped to, the row ids of the last batch it skipped
    (and those its checkpoint recorded for it), and the first row ids it then trained on."""

    rank: int
    step: int
    epoch: int
    batch: int
    recorded_row_ids: list[int]
    last_skipped_row_ids: list[int]
    first_row_ids: list[int]

    @classmethod
    def of(cls, r: dict[str, Any]) -> ResumedPosition:
        return cls(
            r["rank"],
            r["step"],
            r["epoch"],
            r["batch"],
            r["recordedRowIds"],
            r["lastSkippedRowIds"],
            r["firstRowIds"] or [],
        )


@dataclass(frozen=True)
class WorkerResume:
    """One worker across the interruption."""

    rank: int
    #: Its position at the checkpoint the run resumed from (None: not in the logs).
    saved: CheckpointPosition | None
    #: Where its data continued (None: not in the logs).
    resumed: ResumedPosition | None
    #: The rows it trained on up to the checkpoint, and after resuming, in order.
    before: list[int]
    after: list[int]

    def saved_at(self) -> tuple[int, int] | None:
        """(epoch, batches into it) of the checkpoint's position."""
        return (self.saved.epoch, self.saved.batches_in_epoch) if self.saved else None

    def resumed_at(self) -> tuple[int, int] | None:
        """(epoch, batches into it) where the data continued."""
        return (self.resumed.epoch, self.resumed.batch) if self.resumed else None

    def retrained(self) -> list[int]:
        """Rows trained before the kill and again after resuming."""
        return sorted(set(self.before) & set(self.after))


#: Checkpoint positions by (rank, step, step resumed from): Ray may print a worker's line more than once.
Positions = dict[tuple[int, int, int | None], CheckpointPosition]


def _trained(positions: Positions, rank: int, resumed_from: int | None, steps: range) -> list[int]:
    """The rows ``rank`` trained on, in order, at the checkpoints of ``steps`` of the attempt that started at ``resumed_from``."""
    chosen = sorted(
        (p.step, p.rows()) for (r, s, f), p in positions.items() if r == rank and f == resumed_from and s in steps
    )
    return [i for _, rows in chosen for i in rows]


def worker_resumes(logs: list[str], step: int, world_size: int, total_steps: int) -> list[WorkerResume]:
    """Every worker of a training run resumed from the checkpoint of ``step`` and run to ``total_steps``, from the
    logs of its runs (one when Ray Train retried the run itself, two when it was resubmitted)."""
    positions: Positions = {
        (p.rank, p.step, p.resumed_from): p for p in map(CheckpointPosition.of, records(logs, POSITION_AT_CHECKPOINT))
    }
    resumed = {(r.rank, r.step): r for r in map(ResumedPosition.of, records(logs, RESUMED_POSITION))}
    return [
        WorkerResume(
            rank,
            positions.get((rank, step, None)),
            resumed.get((rank, step)),
            _trained(positions, rank, None, range(step + 1)),
            _trained(positions, rank, step, range(step + 1, total_steps + 1)),
        )
        for rank in range(world_size)
    ]
