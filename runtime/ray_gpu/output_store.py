"""The committed-output layout's parts (see ``ray_gpu.outputs``): its names and limits, run ids, the marker and the
files it lists, and the whole-file reads, writes and listings of any filesystem ``pyarrow.fs`` opens."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import strict_json

log = logging.getLogger("ray_gpu")

MARKER = "_SUCCESS.json"
POINTER = "_LATEST"
RUNS_DIR = "runs"
STAGING_DIR = "_staging"
#: Format of the marker and the pointer.
MARKER_FORMAT = "ray-gpu.io/committed-output/v1"
#: Committed runs kept by default: the new one and the previous one.
KEEP_RUNS = 2
#: Staging folders (and marker-less run folders) of runs started longer ago than this are deleted after a commit.
STALE_AFTER_S = 24 * 3600.0
RUN_ID_PATTERN = re.compile(r"(\d{8}T\d{6}\.\d{6})Z-[0-9a-f]{8}\Z")
_TIME_FORMAT = "%Y%m%dT%H%M%S.%f"


class OutputError(RuntimeError):
    """An output cannot be committed or read: no committed run, a folder without a marker, a damaged run."""


@dataclass(frozen=True)
class OutputFile:
    """One data file of a committed run: its path inside the run folder, its rows and bytes."""

    path: str
    rows: int
    bytes: int


@dataclass(frozen=True)
class CommittedRun:
    """A committed run, as its marker describes it. ``uri`` is the run folder; :meth:`paths` are its data files."""

    uri: str
    run_id: str
    started_at: str
    committed_at: str
    files: tuple[OutputFile, ...]
    total_rows: int
    metadata: Mapping[str, Any]

    def paths(self) -> list[str]:
        """Every data file of the run, as URIs in the form the output was given (``ray.data.read_parquet(run.paths())``)."""
        return [_join(self.uri, f.path) for f in self.files]


# ---- names and files ---------------------------------------------------------------------------------------
def new_run_id(at_s: float | None = None) -> str:
    """A run id for a run starting at ``at_s`` (default now): ``YYYYMMDDTHHMMSS.ffffffZ-<8 hex>``, sortable by time."""
    moment = dt.datetime.fromtimestamp(time.time() if at_s is None else at_s, dt.UTC)
    return f"{moment.strftime(_TIME_FORMAT)}Z-{secrets.token_hex(4)}"


def run_started_s(run_id: str) -> float | None:
    """When the run ``run_id`` started (seconds since the epoch), or None when ``run_id`` is not a run id."""
    found = RUN_ID_PATTERN.match(run_id)
    if not found:
        return None
    return dt.datetime.strptime(found.group(1), _TIME_FORMAT).replace(tzinfo=dt.UTC).timestamp()


def _iso(at_s: float) -> str:
    return dt.datetime.fromtimestamp(at_s, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _join(uri: str, *parts: str) -> str:
    return "/".join([uri.rstrip("/"), *parts])


def _absolute(uri: str) -> str:
    """Local paths made absolute (``FileSystem.from_uri`` needs that); URIs unchanged."""
    return uri if "://" in uri else os.path.abspath(uri)


def _filesystem(uri: str) -> tuple[Any, str]:
    """The PyArrow filesystem of ``uri`` and the path inside it."""
    from pyarrow import fs

    return fs.FileSystem.from_uri(_absolute(uri))


def _exists(filesystem: Any, path: str, *, directory: bool = False) -> bool:
    from pyarrow import fs

    info = filesystem.get_file_info(path)
    return bool(info.type == (fs.FileType.Directory if directory else fs.FileType.File))


def _write_whole(filesystem: Any, path: str, payload: Mapping[str, Any]) -> None:
    """Writes a small JSON file whole: to a temporary name, then moved over ``path`` (an object store PUTs it whole)."""
    temporary = f"{path}.tmp-{secrets.token_hex(4)}"
    with filesystem.open_output_stream(temporary) as f:
        f.write(json.dumps(payload, indent=2, sort_keys=True).encode("utf-8"))
    filesystem.move(temporary, path)


def write_json(uri: str, payload: Mapping[str, Any]) -> None:
    """Writes a small JSON document whole at ``uri`` (a local path or any URI ``pyarrow.fs`` opens, such as ``s3://``),
    creating its folder where the filesystem has folders."""
    filesystem, path = _filesystem(uri)
    filesystem.create_dir(os.path.dirname(path), recursive=True)
    _write_whole(filesystem, path, payload)


def _read_json(filesystem: Any, path: str) -> dict[str, Any]:
    """A small JSON object file, strictly parsed; any problem is an :class:`OutputError`."""
    with filesystem.open_input_stream(path) as f:
        raw = f.read(strict_json.MAX_DOCUMENT_BYTES + 1)
    try:
        value = strict_json.parse(strict_json.decode(raw))
    except strict_json.JsonProblems as e:
        raise OutputError(f"{path} is not a valid marker or pointer: {'; '.join(e.problems[:3])}") from None
    if not isinstance(value, dict):
        raise OutputError(f"{path} is not a valid marker or pointer: not a JSON object")
    return value


def _listing(filesystem: Any, path: str, *, recursive: bool) -> list[Any]:
    from pyarrow import fs

    return list(filesystem.get_file_info(fs.FileSelector(path, recursive=recursive, allow_not_found=True)))


def _subfolders(filesystem: Any, path: str) -> list[str]:
    """Names of the run folders directly under ``path`` (names that are run ids; anything else is not ours)."""
    from pyarrow import fs

    names = [
        os.path.basename(i.path.rstrip("/"))
        for i in _listing(filesystem, path, recursive=False)
        if i.type == fs.FileType.Directory
    ]
    return sorted(n for n in names if RUN_ID_PATTERN.match(n))


# ---- markers -----------------------------------------------------------------------------------------------
def _staged_files(filesystem: Any, staging: str) -> list[OutputFile]:
    """Every file the write left in ``staging``, with its rows from its parquet footer (what was written)."""
    import pyarrow.parquet as pq
    from pyarrow import fs

    files = []
    for info in sorted(_listing(filesystem, staging, recursive=True), key=lambda i: str(i.path)):
        if info.type != fs.FileType.File:
            continue
        relative = info.path[len(staging.rstrip("/")) + 1 :]
        if not relative.endswith(".parquet"):
            raise OutputError(
                f"{relative} in {staging}: only parquet files are committed (their footers give the row counts)"
            )
        try:
            rows = pq.read_metadata(info.path, filesystem=filesystem).num_rows
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError, ArrowIOError an OSError
            raise OutputError(
                f"{relative} in {staging}: its parquet footer cannot be read ({e}): not committed"
            ) from None
        files.append(OutputFile(relative, int(rows), int(info.size)))
    return files


def _marker(run_id: str, files: list[OutputFile], metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    started = run_started_s(run_id)
    return {
        "format": MARKER_FORMAT,
        "runId": run_id,
        "startedAt": _iso(started) if started is not None else None,
        "committedAt": _iso(time.time()),
        "files": [{"path": f.path, "rows": f.rows, "bytes": f.bytes} for f in files],
        "fileCount": len(files),
        "totalRows": sum(f.rows for f in files),
        "totalBytes": sum(f.bytes for f in files),
        "metadata": dict(metadata or {}),
    }


def _run_from_marker(run_uri: str, marker: Mapping[str, Any], where: str) -> CommittedRun:
    """The :class:`CommittedRun` a marker describes; a marker that does not add up is an :class:`OutputError`."""
    try:
        files = tuple(OutputFile(str(f["path"]), int(f["rows"]), int(f["bytes"])) for f in marker["files"])
        run = CommittedRun(
            run_uri,
            str(marker["runId"]),
            str(marker["startedAt"]),
            str(marker["committedAt"]),
            files,
            int(marker["totalRows"]),
            dict(marker["metadata"]),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise OutputError(f"{where}: not a {MARKER_FORMAT} marker ({type(e).__name__}: {e})") from None
    if marker.get("format") != MARKER_FORMAT or run.total_rows != sum(f.rows for f in files):
        raise OutputError(f"{where}: not a {MARKER_FORMAT} marker, or its total rows differ from the sum of its files")
    return run
