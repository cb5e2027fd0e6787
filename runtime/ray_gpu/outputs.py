"""Committed job outputs: a rerun never deletes results before it has new ones, and a job killed mid-write never
leaves a partial output that looks complete.

Layout under a job's output URI (``data.outputUri``; a local path or any URI ``pyarrow.fs.FileSystem.from_uri``
opens, such as ``s3://bucket/ray/results/embed-chunks/``)::

    <output>/_staging/<run>/part-*.parquet   a run being written (Ray Data writes here); never read
    <output>/runs/<run>/part-*.parquet       a run's data files, moved out of staging once the write succeeded
    <output>/runs/<run>/_SUCCESS.json        the run's marker, written LAST: rows and bytes of every file, the total,
                                             the run id and times. A run folder without it is not a result.
    <output>/_LATEST                         the pointer: names the marker of the newest committed run; written
                                             after that marker, so it never names an incomplete run

``<run>`` is ``YYYYMMDDTHHMMSS.ffffffZ-<8 hex>`` (UTC start time and a random suffix): runs sort by start time, and
two runs never share a folder. Committing a run, in order: count the rows of every staged file from its parquet
metadata (what was written, not what was planned); move each file into ``runs/<run>/``; write the marker; write the
pointer; remove the staging folder; then prune. Pruning keeps the ``keep_runs`` newest committed runs (at least 2:
the new run and the one before it, which a reader may still be reading) and deletes older ones marker first, so a
half-deleted run is never mistaken for a complete one; staging folders and marker-less run folders of runs that
started more than ``stale_after_s`` ago (default a day: a live writer is never that old) are deleted, younger ones
are left alone and never read.

Object stores have no atomic rename, and moving many files is not one step. Nothing here needs it: a run is complete
exactly when its marker exists, and the marker is written after the last file is in place; the pointer and the
marker are small files written whole (to a temporary name, then moved; an object PUT is atomic). A job killed at any
point leaves the previous committed run in place and the pointer naming it. Readers (:func:`latest_output`,
:func:`read_committed`) follow the pointer (falling back to the newest marker when the pointer is missing or names a
pruned run) and read only the files the marker lists; given a folder without a marker, they refuse it.

PyArrow is imported by the functions that use it, and Ray only by :func:`write_parquet`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from . import interruptions
from .output_store import (
    KEEP_RUNS,
    MARKER,
    MARKER_FORMAT,
    POINTER,
    RUN_ID_PATTERN,
    RUNS_DIR,
    STAGING_DIR,
    STALE_AFTER_S,
    CommittedRun,
    OutputError,
    _absolute,
    _exists,
    _filesystem,
    _join,
    _marker,
    _read_json,
    _run_from_marker,
    _staged_files,
    _subfolders,
    _write_whole,
    log,
    new_run_id,
    run_started_s,
)


def _verify(filesystem: Any, path: str, run: CommittedRun) -> None:
    """Every file the marker lists is there with its recorded size."""
    for f in run.files:
        info = filesystem.get_file_info(f"{path}/{f.path}")
        if info.size != f.bytes:
            found = "missing" if info.size is None else f"{info.size} bytes"
            raise OutputError(
                f"committed run {run.run_id} under {run.uri} is damaged: {f.path} is {found}, its marker says {f.bytes} bytes"
            )


def _open_run(filesystem: Any, root_uri: str, root: str, run_id: str) -> CommittedRun | None:
    """The committed run ``run_id`` under an output root, or None when it has no marker."""
    marker_path = f"{root}/{RUNS_DIR}/{run_id}/{MARKER}"
    if not _exists(filesystem, marker_path):
        return None
    return _run_from_marker(_join(root_uri, RUNS_DIR, run_id), _read_json(filesystem, marker_path), marker_path)


def committed_runs(uri: str) -> list[CommittedRun]:
    """Every committed run under the output ``uri`` (those with a marker), oldest commit first."""
    filesystem, root = _filesystem(uri)
    runs = [
        r
        for r in (_open_run(filesystem, uri, root, run_id) for run_id in _subfolders(filesystem, f"{root}/{RUNS_DIR}"))
        if r
    ]
    return sorted(runs, key=lambda r: (r.committed_at, r.run_id))


# ---- reading -----------------------------------------------------------------------------------------------
def _from_pointer(filesystem: Any, uri: str, root: str) -> CommittedRun | None:
    """The run the pointer names, or None when there is no pointer or its run is gone (pruned by a newer commit)."""
    if not _exists(filesystem, f"{root}/{POINTER}"):
        return None
    pointer = _read_json(filesystem, f"{root}/{POINTER}")
    run_id = str(pointer.get("runId", ""))
    if pointer.get("format") != MARKER_FORMAT or not RUN_ID_PATTERN.match(run_id):
        raise OutputError(f"{root}/{POINTER} is not a {MARKER_FORMAT} pointer")
    return _open_run(filesystem, uri, root, run_id)


def _refusal(uri: str) -> OutputError:
    return OutputError(
        f"{uri} holds no committed output: it has no {MARKER} marker (a run is complete only once its marker is written, so this "
        f"folder is a partial write, a write still in progress, or not written by ray_gpu.outputs) and no {POINTER} pointer or "
        f"committed run under {RUNS_DIR}/. Read the job's output folder (data.outputUri) with ray_gpu.latest_output()."
    )


def latest_output(uri: str, *, verify: bool = True) -> CommittedRun:
    """The newest committed run of an output: ``uri`` is the output folder (its pointer is followed; when missing or
    stale, the newest marker wins) or one committed run folder (``<output>/runs/<run>``, read as it is).

    :param verify: check that every file the marker lists exists with its recorded size
    :raises OutputError: nothing committed there; a folder without a marker (a partial or running write) is refused
    """
    filesystem, path = _filesystem(uri)
    run: CommittedRun | None
    if _exists(filesystem, f"{path}/{MARKER}"):
        run = _run_from_marker(uri.rstrip("/"), _read_json(filesystem, f"{path}/{MARKER}"), f"{path}/{MARKER}")
    else:
        run = _from_pointer(filesystem, uri, path) or next(reversed(committed_runs(uri)), None)
    if run is None:
        raise _refusal(uri)
    if verify:
        _verify(filesystem, _filesystem(run.uri)[1], run)
    return run


def read_committed(uri: str, *, columns: list[str] | None = None) -> Any:
    """The data of the newest committed run of ``uri`` (see :func:`latest_output`) as a ``pyarrow.Table``: only
    the files its marker lists, never a staging or uncommitted file.

    :raises OutputError: as :func:`latest_output`, or when the rows read differ from the marker's
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = latest_output(uri)
    filesystem, path = _filesystem(run.uri)
    tables = [pq.read_table(f"{path}/{f.path}", filesystem=filesystem, columns=columns) for f in run.files]
    table = pa.concat_tables(tables) if tables else pa.table({})
    if table.num_rows != run.total_rows:
        raise OutputError(f"committed run {run.run_id}: read {table.num_rows} rows, its marker says {run.total_rows}")
    return table


# ---- committing --------------------------------------------------------------------------------------------
def _delete_run(filesystem: Any, folder: str) -> None:
    """Deletes a run folder, its marker first: a half-deleted run is never taken for a complete one."""
    if _exists(filesystem, f"{folder}/{MARKER}"):
        filesystem.delete_file(f"{folder}/{MARKER}")
    filesystem.delete_dir(folder)


def prune(
    uri: str, *, keep_runs: int = KEEP_RUNS, stale_after_s: float = STALE_AFTER_S, now_s: float | None = None
) -> list[str]:
    """Deletes committed runs beyond the ``keep_runs`` newest (the pointer's run is always kept), and staging or
    marker-less run folders of runs started more than ``stale_after_s`` ago; younger ones may be live writers and
    are left alone. Returns the deleted folders.

    :raises ValueError: ``keep_runs`` below 2 (the previous run must outlive the commit of the next)
    """
    if keep_runs < KEEP_RUNS:
        raise ValueError(f"keep_runs must be at least {KEEP_RUNS}: a reader may still be reading the previous run")
    filesystem, root = _filesystem(uri)
    pointed = _from_pointer(filesystem, uri, root)
    committed = [r.run_id for r in committed_runs(uri)]
    keep = set(committed[-keep_runs:]) | ({pointed.run_id} if pointed else set())
    doomed = [f"{root}/{RUNS_DIR}/{r}" for r in committed if r not in keep]
    cutoff = (time.time() if now_s is None else now_s) - stale_after_s
    for parent in (RUNS_DIR, STAGING_DIR):
        for run_id in _subfolders(filesystem, f"{root}/{parent}"):
            started = run_started_s(run_id)
            stale = started is not None and started < cutoff
            # A staging folder of a committed run is a leftover; a run folder without a marker is a dead commit.
            if (parent == STAGING_DIR and (stale or run_id in committed)) or (
                parent == RUNS_DIR and stale and run_id not in committed
            ):
                doomed.append(f"{root}/{parent}/{run_id}")
    for folder in doomed:
        _delete_run(filesystem, folder)
    return doomed


class StagedOutput:
    """One run of an output being written: write its files under :attr:`staging_uri`, then :meth:`commit` (or use
    :func:`staged_output`, which commits when its block succeeds and discards the staging folder when it raises)."""

    def __init__(
        self, uri: str, *, keep_runs: int = KEEP_RUNS, stale_after_s: float = STALE_AFTER_S, run_id: str | None = None
    ):
        if keep_runs < KEEP_RUNS:
            raise ValueError(f"keep_runs must be at least {KEEP_RUNS}: a reader may still be reading the previous run")
        self.uri = _absolute(uri).rstrip("/")
        self.run_id = run_id or new_run_id()
        if not RUN_ID_PATTERN.match(self.run_id):
            raise ValueError(
                f"run id {self.run_id!r} is not of the form YYYYMMDDTHHMMSS.ffffffZ-<8 hex> (use new_run_id())"
            )
        self.staging_uri = _join(self.uri, STAGING_DIR, self.run_id)
        self.keep_runs, self.stale_after_s = keep_runs, stale_after_s
        self.committed: CommittedRun | None = None

    def commit(self, *, expected_rows: int | None = None, metadata: Mapping[str, Any] | None = None) -> CommittedRun:
        """Commits what was written under :attr:`staging_uri`: files moved to ``runs/<run>/``, then the marker, then
        the pointer; then older runs are pruned. Returns the committed run.

        :param expected_rows: refuse to commit unless the files hold exactly this many rows
        :param metadata: recorded in the marker (workload, model, ...)
        :raises OutputError: the staging folder holds a non-parquet file, or not ``expected_rows`` rows (nothing is committed)
        """
        filesystem, root = _filesystem(self.uri)
        staging, target = f"{root}/{STAGING_DIR}/{self.run_id}", f"{root}/{RUNS_DIR}/{self.run_id}"
        files = _staged_files(filesystem, staging)
        marker = _marker(self.run_id, files, metadata)
        if expected_rows is not None and marker["totalRows"] != expected_rows:
            raise OutputError(
                f"run {self.run_id} wrote {marker['totalRows']} rows, expected {expected_rows}: not committed "
                f"(staged files in {self.staging_uri})"
            )
        filesystem.create_dir(target, recursive=True)
        for f in files:
            filesystem.create_dir(os.path.dirname(f"{target}/{f.path}"), recursive=True)
            filesystem.move(f"{staging}/{f.path}", f"{target}/{f.path}")
        _write_whole(filesystem, f"{target}/{MARKER}", marker)
        _write_whole(
            filesystem,
            f"{root}/{POINTER}",
            {"format": MARKER_FORMAT, "runId": self.run_id, "marker": f"{RUNS_DIR}/{self.run_id}/{MARKER}"},
        )
        self.committed = _run_from_marker(_join(self.uri, RUNS_DIR, self.run_id), marker, f"{target}/{MARKER}")
        log.info(
            "committed run %s: %d rows in %d files under %s",
            self.run_id,
            self.committed.total_rows,
            len(files),
            self.committed.uri,
        )
        with contextlib.suppress(OSError):
            filesystem.delete_dir(staging)
        for folder in prune(self.uri, keep_runs=self.keep_runs, stale_after_s=self.stale_after_s):
            log.info("pruned %s", folder)
        return self.committed

    def abort(self) -> None:
        """Deletes this run's staging folder (what a failed write left); committed runs are untouched."""
        filesystem, root = _filesystem(self.uri)
        if _exists(filesystem, f"{root}/{STAGING_DIR}/{self.run_id}", directory=True):
            filesystem.delete_dir(f"{root}/{STAGING_DIR}/{self.run_id}")


@contextlib.contextmanager
def staged_output(
    uri: str, *, keep_runs: int = KEEP_RUNS, expected_rows: int | None = None, metadata: Mapping[str, Any] | None = None
) -> Iterator[StagedOutput]:
    """A run of the output ``uri``: write under ``staged.staging_uri`` inside the block; when the block returns the
    run is committed (``staged.committed``), when it raises the staging folder is deleted and the error propagates,
    and the previous committed run stays the latest either way.

    :raises OutputError: the commit refused the written files (see :meth:`StagedOutput.commit`)
    """
    staged = StagedOutput(uri, keep_runs=keep_runs)
    try:
        yield staged
    except BaseException:
        try:
            staged.abort()
        except OSError as cleanup:
            log.warning(
                "could not delete the staging folder %s of a failed write: %s (it is never read)",
                staged.staging_uri,
                cleanup,
            )
        raise
    if staged.committed is None:
        staged.commit(expected_rows=expected_rows, metadata=metadata)


# ---- Ray Data ----------------------------------------------------------------------------------------------
def write_parquet(
    ds: Any,
    uri: str,
    *,
    keep_runs: int = KEEP_RUNS,
    expected_rows: int | None = None,
    metadata: Mapping[str, Any] | None = None,
    on_written: Callable[[Any], None] | None = None,
    **write_kwargs: Any,
) -> CommittedRun:
    """Writes a Ray Dataset to the output ``uri`` as a new committed run (``ds.write_parquet`` into staging, then
    :meth:`StagedOutput.commit`); replaces ``ds.write_parquet(uri, mode="overwrite")``, which deletes the previous
    results before the new ones exist. Returns the committed run (rows counted from the written files).

    :param on_written: called once the run is committed, with the Dataset object that wrote (``ds``, or the dataset
        a test hook wrapped it in), whose execution stats are what the write ran (``ray_gpu.run_record.stats_summary``);
        not called when the write or the commit fails, and an error it raises leaves the run committed
    :param write_kwargs: passed to ``Dataset.write_parquet`` (not ``mode``: every run writes a new folder)
    :raises OutputError: as :meth:`StagedOutput.commit`; a failed write commits nothing
    """
    if "mode" in write_kwargs:
        raise ValueError("write_parquet writes every run to a new folder: drop mode=")
    with staged_output(uri, keep_runs=keep_runs, expected_rows=expected_rows, metadata=metadata) as staged:
        log.info("writing run %s to %s (committed when the write completes)", staged.run_id, staged.staging_uri)
        writer = interruptions.hold_write(ds)
        writer.write_parquet(staged.staging_uri, **write_kwargs)
    assert staged.committed is not None  # staged_output committed it
    if on_written is not None:
        on_written(writer)
    return staged.committed
