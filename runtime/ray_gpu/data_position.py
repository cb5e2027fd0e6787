"""Where a training worker is in its data, saved with each checkpoint, so that a resumed run continues the data
exactly where the interrupted one stopped instead of starting again from the first row.

A worker reads its shard as epochs of fixed-size batches (``iter_torch_batches(batch_size=..., drop_last=True)``).
Its position is the epoch and the number of batches of that epoch it has trained on; :func:`resumable_batches`
yields the batches epoch after epoch and advances the position *before* yielding each one, so at any checkpoint
(taken after an optimizer step) the position counts exactly the batches trained. On resume it reads and drops
that many batches of that epoch, then yields the next one.

That is exact only when every run sees the shard's rows in the same order. Ray Train splits a dataset across its
workers with ``streaming_split(equal=True)``, which hands blocks to whichever worker has the fewest rows so far;
with ``preserve_order`` the blocks arrive in dataset order and the split is a function of that order alone
(locality hints, which depend on where blocks happen to live, are ignored). :func:`deterministic_data_config` gives
Ray Train that setting (``TorchTrainer(dataset_config=...)``); the dataset itself must be deterministic (no random
shuffle, or a seeded one). When the data has row ids, the position keeps the ids of the last batch trained and a
resumed run checks that the last batch it skips has the same ids: if the order changed (other data, other block
sizes, another number of workers) the run stops with :class:`DataPositionError` instead of silently training some
rows twice and skipping others.

Standard library only; Ray is imported by :func:`deterministic_data_config`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from . import strict_json

#: File name of a worker's position inside a checkpoint directory (``{rank}`` is its world rank).
POSITION_FILE = "data_position.rank-{rank}.json"
#: Column that holds row ids, when the data has one.
ROW_ID_COLUMN = "id"


class DataPositionError(RuntimeError):
    """A saved data position does not fit the run resuming from it (other data order, batch size or worker count)."""


@dataclass
class DataPosition:
    """A worker's place in its shard. ``batches_in_epoch`` batches of epoch ``epoch`` (counted from 0) were trained
    on; ``rows_consumed`` counts every row trained on, over all epochs; ``last_row_ids`` are the ids of the last
    batch trained (None without a row-id column)."""

    batch_size: int
    world_size: int
    rank: int
    epoch: int = 0
    batches_in_epoch: int = 0
    rows_consumed: int = 0
    last_row_ids: list[int] | None = field(default=None)

    def to_json(self) -> str:
        """The position as one JSON object (camelCase keys, like the tuning document)."""
        d = asdict(self)
        keys = {
            "batch_size": "batchSize",
            "world_size": "worldSize",
            "batches_in_epoch": "batchesInEpoch",
            "rows_consumed": "rowsConsumed",
            "last_row_ids": "lastRowIds",
        }
        return json.dumps({keys.get(k, k): v for k, v in d.items()}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> DataPosition:
        """The position :meth:`to_json` wrote.

        :raises DataPositionError: the text is not such a position
        """
        try:
            d = strict_json.parse(text)
            ids = d.get("lastRowIds")
            return cls(
                batch_size=_count(d["batchSize"]),
                world_size=_count(d["worldSize"]),
                rank=_count(d["rank"]),
                epoch=_count(d["epoch"]),
                batches_in_epoch=_count(d["batchesInEpoch"]),
                rows_consumed=_count(d["rowsConsumed"]),
                last_row_ids=None if ids is None else [_count(i, negative=True) for i in ids],
            )
        except (strict_json.JsonProblems, KeyError, TypeError, AttributeError, ValueError) as e:
            raise DataPositionError(f"not a saved data position: {e}") from None

    def check_fits(self, batch_size: int, world_size: int, rank: int) -> None:
        """Raises :class:`DataPositionError` unless this position was saved by a worker of the same rank, with the same
        batch size and number of workers (otherwise its count of batches means other rows)."""
        saved, now = (self.batch_size, self.world_size, self.rank), (batch_size, world_size, rank)
        if saved != now:
            raise DataPositionError(
                f"the checkpoint's data position is for batch size {saved[0]}, {saved[1]} workers, rank "
                f"{saved[2]}; this run has {now[0]}, {now[1]}, {now[2]}: "
                "its batches are other rows. Resume with the same batch size and workers, or start the data from "
                "the beginning (a new run name)"
            )

    def advance(self, rows: int, row_ids: list[int] | None) -> None:
        """Counts one more batch of ``rows`` rows as trained on."""
        self.batches_in_epoch += 1
        self.rows_consumed += rows
        self.last_row_ids = row_ids

    def next_epoch(self) -> None:
        """Moves to the start of the next epoch."""
        self.epoch += 1
        self.batches_in_epoch = 0


def _count(value: Any, negative: bool = False) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or (value < 0 and not negative):
        raise ValueError(f"expected a count, got {value!r}")
    return value


def save_position(directory: str, position: DataPosition) -> str:
    """Writes ``position`` into a checkpoint directory (one file per rank, so every worker's checkpoint files merge
    into one checkpoint without clashing); returns the file's path."""
    path = os.path.join(directory, POSITION_FILE.format(rank=position.rank))
    with open(path, "w", encoding="utf-8") as f:
        f.write(position.to_json())
    return path


def load_position(directory: str, rank: int) -> DataPosition | None:
    """The position rank ``rank`` saved in a checkpoint directory, or None when the checkpoint has none (it was
    written before positions were saved: the data then starts from the beginning).

    :raises DataPositionError: the file is there but is not a position
    """
    path = os.path.join(directory, POSITION_FILE.format(rank=rank))
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        raw = f.read(strict_json.MAX_DOCUMENT_BYTES + 1)
    try:
        return DataPosition.from_json(strict_json.decode(raw))
    except strict_json.JsonProblems as e:
        raise DataPositionError(f"{path}: not a saved data position: {e}") from None


def row_ids_of(batch: Any) -> list[int] | None:
    """The ids of a batch's rows (its ``id`` column: a tensor, an array or a list), or None when it has none."""
    ids = batch.get(ROW_ID_COLUMN) if isinstance(batch, dict) else None
    if ids is None:
        return None
    values = ids.tolist() if hasattr(ids, "tolist") else list(ids)
    return [int(v) for v in values]


def id_ranges(ids: Sequence[int]) -> list[list[int]]:
    """``[0, 1, 2, 7, 8]`` -> ``[[0, 2], [7, 8]]``: runs of consecutive ids, in order (compact logs of rows trained)."""
    ranges: list[list[int]] = []
    for i in ids:
        if ranges and i == ranges[-1][1] + 1:
            ranges[-1][1] = i
        else:
            ranges.append([i, i])
    return ranges


@dataclass
class ResumeRecord:
    """What resuming did: the position it resumed at, the ids of the last batch skipped and of the first batch
    yielded after it (None without row ids), and the ids the checkpoint recorded for its last batch."""

    epoch: int
    skipped_batches: int
    skipped_rows: int
    recorded_row_ids: list[int] | None
    last_skipped_row_ids: list[int] | None
    first_row_ids: list[int] | None = None


def _rows_of(batch: Any) -> int:
    if isinstance(batch, dict):
        return len(next(iter(batch.values()))) if batch else 0
    return len(batch)


_END = object()


class PositionedBatches:
    """A worker's batches, epoch after epoch without end, starting at a data position; see :func:`resumable_batches`."""

    def __init__(
        self,
        iter_epoch: Callable[[], Iterable[Any]],
        position: DataPosition,
        *,
        row_ids: Callable[[Any], list[int] | None],
        verify: bool,
    ):
        self.position = position
        #: Set once a resumed run has skipped what its checkpoint had consumed; None for a run from the beginning.
        self.resumed: ResumeRecord | None = None
        self._iter_epoch, self._row_ids, self._verify = iter_epoch, row_ids, verify

    def _skip(self, batches: Iterator[Any]) -> None:
        """Reads and drops the batches of the current epoch the position says were trained on, checking the last."""
        p, last, rows = self.position, None, 0
        for n in range(p.batches_in_epoch):
            batch = next(batches, _END)
            if batch is _END:
                raise DataPositionError(
                    f"epoch {p.epoch} ended after {n} batches; the checkpoint says {p.batches_in_epoch} were trained on: the data changed"
                )
            last, rows = self._row_ids(batch), rows + _rows_of(batch)
        if self._verify and p.last_row_ids is not None and last is not None and last != p.last_row_ids:
            raise DataPositionError(
                f"batch {p.batches_in_epoch} of epoch {p.epoch} is rows {abbreviated(last)}, the checkpoint "
                f"recorded rows {abbreviated(p.last_row_ids)}: "
                "the data order differs from the interrupted run's (other data, block sizes or workers, or a "
                "shuffle): resuming would train some rows twice and skip others"
            )
        self.resumed = ResumeRecord(p.epoch, p.batches_in_epoch, rows, p.last_row_ids, last)

    def __iter__(self) -> Iterator[Any]:
        batches = iter(self._iter_epoch())
        if self.position.rows_consumed:
            self._skip(batches)
        while True:
            seen = self.position.batches_in_epoch
            for batch in batches:
                seen += 1
                self.position.advance(_rows_of(batch), self._row_ids(batch))
                if self.resumed is not None and self.resumed.first_row_ids is None:
                    self.resumed.first_row_ids = self.position.last_row_ids
                yield batch
            if not seen:
                raise DataPositionError(
                    f"epoch {self.position.epoch} has no full batch of {self.position.batch_size} rows for rank {self.position.rank}"
                )
            self.position.next_epoch()
            batches = iter(self._iter_epoch())


def resumable_batches(
    iter_epoch: Callable[[], Iterable[Any]],
    position: DataPosition,
    *,
    row_ids: Callable[[Any], list[int] | None] = row_ids_of,
    verify: bool = True,
) -> PositionedBatches:
    """The batches of a worker's shard, epoch after epoch without end, continuing from ``position``.

    ``iter_epoch()`` returns one epoch's batches (``lambda: shard.iter_torch_batches(batch_size=b, drop_last=True)``).
    ``position`` is advanced before each batch is yielded, so it is exact whenever the caller checkpoints after
    training on the batches it got: save it with the checkpoint (:func:`save_position`). A position restored from a
    checkpoint (:func:`load_position`) makes the iteration skip the batches that position counts in its epoch, check
    (``verify``) that the last one skipped has the row ids it recorded, and record what it did in ``.resumed``.

    :raises DataPositionError: (while iterating) the data order or length differs from the interrupted run's, or an
        epoch has no full batch
    """
    return PositionedBatches(iter_epoch, position, row_ids=row_ids, verify=verify)


def abbreviated(ids: Sequence[int] | None, shown: int = 4) -> str:
    """A short text of row ids for logs: ``[0, 1, 2, 3, ... 63]``."""
    if ids is None:
        return "(no row ids)"
    items = list(ids)
    return str(items) if len(items) <= shown + 1 else f"[{', '.join(map(str, items[:shown]))}, ... {items[-1]}]"


def deterministic_data_config() -> Any:
    """A ``ray.train.DataConfig`` whose dataset splits are the same in every run of the same data and workers:
    Ray Data's current execution options with ``preserve_order`` on (which also turns the locality hints off). Pass
    it as ``TorchTrainer(dataset_config=...)``; the ordered execution is what makes a data position exact."""
    from ray.data import DataContext, ExecutionOptions
    from ray.train import DataConfig

    current = DataContext.get_current().execution_options
    options = ExecutionOptions(
        resource_limits=current.resource_limits, preserve_order=True, verbose_progress=current.verbose_progress
    )
    return DataConfig(execution_options=options, enable_shard_locality=False)
