"""The committed-outputs experiment of the end-to-end run (``test_committed_outputs.py``): an embedding job's output
survives a rerun killed mid-write.

On one local cluster of the rendered EmbeddingPipeline RayJob, its entrypoint runs three times into the same
output (``data.outputUri`` under a storage folder standing in for the bucket):

1. to completion: a committed run (marker with the row count of every file, pointer naming it);
2. again, with the runtime's interruption hook ``RAY_GPU_TEST_HOLD_WRITE_AFTER_BLOCKS`` (``ray_gpu.interruptions``)
   letting exactly three blocks through to the writer and holding the next; once those three part files are in its
   staging folder the driver's process group gets SIGKILL, so the kill lands mid-write on every machine;
3. again, to completion.

What a reader sees of the output is read after 2 and after 3 (``OutputState``); the tests check that after 2 the
first run is still the latest committed run, intact (every file of its marker there with its size, the rows read
back are its rows), that the killed run has no marker and no run folder and its staging folder is refused by the
reader, and that after 3 the third run is the latest, with all rows, and the first run is still kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from cluster import LocalCluster
from harness import Harness, JobRun, run_on
from job_cluster import job_dir, started_cluster
from processes import HANG_GUARD_S

from ray_gpu import interruptions, outputs  # the runtime library of this checkout

ROWS = 8192
#: Characters per synthetic row (the example's default): 8 input files of 1024 rows, each about 7 MB, each its own
#: block under the planned block size, so the write has 8 parts, like a real output has many.
TEXT_CHARS = 7000
#: Blocks the killed run's write lets through before the hook holds the next one: the driver dies with this many
#: part files staged.
KILL_AT_PART = 3


def staged_parts(root: str) -> tuple[str | None, list[str]]:
    """The staging folder of the run being written under the output ``root`` and its part files (so far)."""
    staging = os.path.join(root, outputs.STAGING_DIR)
    runs = sorted(os.listdir(staging)) if os.path.isdir(staging) else []
    if not runs:
        return None, []
    folder = os.path.join(staging, runs[-1])
    return folder, sorted(f for f in os.listdir(folder) if f.endswith(".parquet"))


@dataclass
class MidWriteKill:
    """A watcher of the killed run's driver, on a thread of its own from the driver's first line: once
    ``KILL_AT_PART`` part files are staged under ``root`` (the hook holds every later block, so no more can come), it
    records the staging folder and the parts, then SIGKILLs the driver's process group. ``done`` is set when it
    ends, whatever happened: read the fields only after ``settled()``."""

    root: str
    #: The killed run's staging folder and its part files when the kill was sent (None, 0: no kill sent).
    folder: str | None = None
    parts: int = 0
    done: threading.Event = field(default_factory=threading.Event, init=False, repr=False)
    _watcher: threading.Thread | None = field(default=None, init=False, repr=False)

    def on_line(self, _line: str, proc: subprocess.Popen[str]) -> None:
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, args=(proc,), daemon=True)
            self._watcher.start()

    def _watch(self, proc: subprocess.Popen[str]) -> None:
        try:
            if self._wait_for_parts(proc):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
        finally:
            self.done.set()

    def _wait_for_parts(self, proc: subprocess.Popen[str]) -> bool:
        """Waits until ``KILL_AT_PART`` parts are staged (and records them), or the hang guard ends; False when the
        driver ended first."""
        deadline = time.monotonic() + HANG_GUARD_S  # a hang guard, never a verdict
        while proc.poll() is None:
            folder, parts = staged_parts(self.root)
            if len(parts) >= KILL_AT_PART:
                self.folder, self.parts = folder, len(parts)
                return True
            if time.monotonic() > deadline:
                return True
            time.sleep(0.1)
        return False

    def settled(self) -> MidWriteKill:
        """This watcher once its thread has ended (at once when the driver printed nothing)."""
        if self._watcher is not None:
            self.done.wait()
        return self

    @property
    def run_id(self) -> str:
        """The killed run's id (its staging folder's name)."""
        return os.path.basename(self.folder) if self.folder else "?"


@dataclass(frozen=True)
class OutputState:
    """What a reader sees of the output under ``root``: the latest committed run (None when it cannot be read, and
    why), every committed run's id, and the ids of the rows it reads."""

    latest: outputs.CommittedRun | None
    error: str | None
    committed: list[str]
    ids: list[int]

    @classmethod
    def read(cls, root: str) -> OutputState:
        try:
            latest = outputs.latest_output(root)  # checks every file of its marker is there with its size
            committed = [r.run_id for r in outputs.committed_runs(root)]
            ids = sorted(outputs.read_committed(root, columns=["id"]).column("id").to_pylist())
        except outputs.OutputError as e:
            return cls(None, str(e), [], [])
        return cls(latest, None, committed, ids)


def refused(folder: str | None) -> bool:
    """Whether the reader refuses ``folder`` (an uncommitted run's)."""
    try:
        outputs.latest_output(folder or "/nonexistent")
    except outputs.OutputError:
        return True
    return False


@dataclass(frozen=True)
class KilledRunTraces:
    """What the killed run left under the output ``root``: a marker in its staging folder or a run folder."""

    marker: bool
    run_folder: bool

    @classmethod
    def of(cls, root: str, kill: MidWriteKill) -> KilledRunTraces:
        marker = bool(kill.folder) and os.path.exists(os.path.join(str(kill.folder), outputs.MARKER))
        return cls(marker, os.path.exists(os.path.join(root, outputs.RUNS_DIR, kill.run_id)))


@dataclass
class OutputsExperiment:
    """The three runs, the kill, and what a reader saw after the kill and after the rerun."""

    first: JobRun
    killed: JobRun
    rerun: JobRun
    kill: MidWriteKill
    after_kill: OutputState
    traces: KilledRunTraces
    killed_folder_refused: bool
    after_rerun: OutputState


def _run(
    harness: Harness,
    cluster: LocalCluster,
    doc: dict[str, Any],
    entrypoint: str,
    jobdir: str,
    label: str,
    kill: MidWriteKill | None = None,
) -> JobRun:
    """One run of the experiment on its cluster; ``kill``: with the hook holding the write, killed mid-write."""
    log = os.path.join(jobdir, re.sub(r"[^A-Za-z0-9.-]+", "-", label).strip("-") + ".log")
    hook: dict[str, Any] = {}
    note = ""
    if kill is not None:
        hook = {"on_line": kill.on_line, "extra_env": {interruptions.HOLD_WRITE_AFTER_BLOCKS_ENV: str(KILL_AT_PART)}}
        note = f" ({interruptions.HOLD_WRITE_AFTER_BLOCKS_ENV}={KILL_AT_PART}, killed mid-write)"
    print(f"\n== {label}: {entrypoint}{note}", flush=True)
    run = run_on(cluster, doc, label, entrypoint, log, harness.timeout, **hook)
    harness.runs.append(run)
    return run


def run_outputs_experiment(harness: Harness, name: str) -> OutputsExperiment:
    """Runs the three runs of the embedding job ``name`` (see the module) and reads the output after the kill and
    after the rerun."""
    label = f"{name} (committed outputs)"
    jobdir, storage = job_dir(harness.work, label), harness.storage(f"{name}-outputs")
    job = harness.job(name)
    entrypoint = job["spec"]["entrypoint"] + f" --smoke --smoke-rows {ROWS} --smoke-text-chars {TEXT_CHARS}"
    with started_cluster(name, job, harness.objects, jobdir, storage) as (cluster, doc):
        root = os.path.join(storage, doc["data"]["outputUri"].strip("/"))
        first = _run(harness, cluster, doc, entrypoint, jobdir, f"{name} (outputs: first run)")
        kill = MidWriteKill(root)
        killed = _run(harness, cluster, doc, entrypoint, jobdir, f"{name} (outputs: killed mid-write)", kill)
        kill.settled()
        after_kill, traces, killed_refused = (
            OutputState.read(root),
            KilledRunTraces.of(root, kill),
            refused(kill.folder),
        )
        rerun = _run(harness, cluster, doc, entrypoint, jobdir, f"{name} (outputs: rerun)")
    after_rerun = OutputState.read(root)
    print(
        f"  committed outputs: driver killed at part {kill.parts} of run {kill.run_id}; latest after the kill: "
        f"{after_kill.latest.run_id if after_kill.latest else after_kill.error}; after the rerun: {after_rerun.committed}",
        flush=True,
    )
    return OutputsExperiment(first, killed, rerun, kill, after_kill, traces, killed_refused, after_rerun)
