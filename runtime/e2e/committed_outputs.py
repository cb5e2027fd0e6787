"""The committed-outputs experiment of the end-to-end run (``run_jobs.py --checks outputs``): an embedding job's
output survives a rerun killed mid-write.

On one local cluster of the rendered EmbeddingPipeline RayJob, its entrypoint runs three times into the same
output (``data.outputUri`` under a storage folder standing in for the bucket):

1. to completion: a committed run (marker with the row count of every file, pointer naming it);
2. again, with the runtime's interruption hook ``RAY_GPU_TEST_HOLD_WRITE_AFTER_BLOCKS`` (``ray_gpu.interruptions``)
   letting exactly three blocks through to the writer and holding the next; once those three part files are in its
   staging folder the driver's process group gets SIGKILL, so the kill lands mid-write on every machine;
3. again, to completion.

Checked after 2: the first run is still the latest committed run, intact (every file of its marker there with its
size, the rows read back are its rows), the killed run has no marker and no run folder, and its staging folder is
refused by the reader. After 3: the third run is the latest, with all rows, and the first run is still kept.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from cluster import LocalCluster
from failures import Failures
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


def kill_when_held(root: str, killed: dict[str, Any]) -> Callable[[str, Any], None]:
    """A watcher of the killed run's driver: once ``KILL_AT_PART`` part files are staged (the hook holds every later
    block, so no more can come), SIGKILLs the driver's process group."""

    def watch(proc: Any) -> None:
        for _ in range(int(HANG_GUARD_S / 0.1)):
            folder, parts = staged_parts(root)
            if proc.poll() is not None:
                return
            if len(parts) >= KILL_AT_PART:
                os.killpg(proc.pid, signal.SIGKILL)
                killed.update(folder=folder, parts=len(parts))
                return
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)  # the hang guard

    def on_line(_line: str, proc: Any) -> None:
        if not killed.get("watching"):
            killed["watching"] = True
            threading.Thread(target=watch, args=(proc,), daemon=True).start()

    return on_line


def _ids(root: str) -> list[int]:
    return sorted(outputs.read_committed(root, columns=["id"]).column("id").to_pylist())


def _run(cluster: LocalCluster, entrypoint: str, jobdir: str, label: str, timeout: float, **kwargs: Any) -> dict[str, Any]:
    log = os.path.join(jobdir, re.sub(r"[^A-Za-z0-9.-]+", "-", label).strip("-") + ".log")
    hook = f" ({interruptions.HOLD_WRITE_AFTER_BLOCKS_ENV}={KILL_AT_PART}, killed mid-write)" if kwargs else ""
    print(f"\n== {label}: {entrypoint}{hook}", flush=True)
    rc, wall = cluster.run_entrypoint(entrypoint, log, timeout, **kwargs)
    return {"job": label, "rc": rc, "wallSeconds": round(wall, 1), "log": log, **cluster.running().spilled()}


def committed_outputs_experiment(
    name: str, job: dict[str, Any], objects: dict[str, Any], work: str, timeout: float, failures: Failures
) -> list[dict[str, Any]]:
    """Runs the three runs (see the module) and checks them; returns one summary row per run."""
    label = f"{name} (committed outputs)"
    jobdir, storage = job_dir(work, label), os.path.join(work, "storage", f"{name}-outputs")
    entrypoint = job["spec"]["entrypoint"] + f" --smoke --smoke-rows {ROWS} --smoke-text-chars {TEXT_CHARS}"
    killed: dict[str, Any] = {}
    with started_cluster(name, job, objects, jobdir, storage) as (cluster, doc):
        root = os.path.join(storage, doc["data"]["outputUri"].strip("/"))
        first = _run(cluster, entrypoint, jobdir, f"{name} (outputs: first run)", timeout)
        second = _run(
            cluster,
            entrypoint,
            jobdir,
            f"{name} (outputs: killed mid-write)",
            timeout,
            on_line=kill_when_held(root, killed),
            extra_env={interruptions.HOLD_WRITE_AFTER_BLOCKS_ENV: str(KILL_AT_PART)},
        )
        after_kill = _check_after_kill(root, first, second, killed, failures) if first["rc"] == 0 else None
        third = _run(cluster, entrypoint, jobdir, f"{name} (outputs: rerun)", timeout)
    if after_kill is not None and failures.check(third["rc"] == 0, f"{name}: the rerun after the kill failed (log: {third['log']})"):
        _check_rerun(root, after_kill, third, killed, failures)
    failures.check(first["rc"] == 0, f"{name}: the first outputs run failed (log: {first['log']})")
    return [first, second, third]


def _refused(folder: str | None) -> bool:
    """Whether the reader refuses ``folder`` (an uncommitted run's)."""
    try:
        outputs.latest_output(folder or "/nonexistent")
    except outputs.OutputError:
        return True
    return False


def _check_after_kill(root: str, first: dict[str, Any], second: dict[str, Any], killed: dict[str, Any], failures: Failures) -> outputs.CommittedRun | None:
    """After the kill: the first run is the latest and intact; the killed run has no marker and is never read."""
    try:
        previous = outputs.latest_output(root)  # checks every file of its marker is there with its size
        committed = [r.run_id for r in outputs.committed_runs(root)]
        ids = _ids(root)
    except outputs.OutputError as e:
        failures.check(False, f"committed outputs: after the kill the output cannot be read: {e}")
        return None
    folder, parts = killed.get("folder"), killed.get("parts", 0)
    failures.check(
        parts == KILL_AT_PART and second["rc"] != 0,
        f"committed outputs: the second run was not killed with {KILL_AT_PART} parts staged (rc {second['rc']}, {parts} parts staged)",
    )
    failures.check(parts < len(previous.files), f"committed outputs: the kill landed after the write ({parts} of {len(previous.files)} parts staged)")
    failures.check(committed == [previous.run_id], f"committed outputs: expected only the first run committed, found {committed}")
    failures.check(
        previous.total_rows == ROWS and ids == list(range(ROWS)), f"committed outputs: the previous run reads {len(ids)} rows, not ids 0..{ROWS - 1}"
    )
    run_id = os.path.basename(folder) if folder else "?"
    failures.check(
        bool(folder) and not os.path.exists(os.path.join(str(folder), outputs.MARKER)) and not os.path.exists(os.path.join(root, outputs.RUNS_DIR, run_id)),
        f"committed outputs: the killed run {run_id} has a marker or a run folder",
    )
    failures.check(_refused(folder), f"committed outputs: the reader accepted the killed run's staging folder {folder}")
    first["verdict"] = f"committed run {previous.run_id}: {previous.total_rows} rows in {len(previous.files)} files"
    second["verdict"] = (
        f"driver SIGKILLed at part {parts}/{len(previous.files)} of run {run_id}: no marker, refused by the reader; {previous.run_id} stayed the latest"
    )
    killed["previous_files"] = len(previous.files)
    return previous


def _check_rerun(root: str, previous: outputs.CommittedRun, third: dict[str, Any], killed: dict[str, Any], failures: Failures) -> None:
    """After the rerun: it is the latest, with every row, and the previous run is kept beside it."""
    latest = outputs.latest_output(root)
    runs = [r.run_id for r in outputs.committed_runs(root)]
    killed_id = os.path.basename(killed.get("folder") or "?")
    failures.check(latest.run_id not in (previous.run_id, killed_id), f"committed outputs: the rerun is not the latest ({latest.run_id})")
    failures.check(
        latest.total_rows == ROWS and _ids(root) == list(range(ROWS)), f"committed outputs: the rerun committed {latest.total_rows} rows, not {ROWS}"
    )
    failures.check(runs == [previous.run_id, latest.run_id], f"committed outputs: expected the previous run kept beside the rerun, found {runs}")
    third["verdict"] = f"committed run {latest.run_id}: {latest.total_rows} rows, now the latest; {previous.run_id} kept"
    print(
        f"  committed outputs: killed mid-write at part {killed.get('parts')}/{killed.get('previous_files')}; previous run ({previous.total_rows} rows) intact; "
        f"rerun committed {latest.total_rows} rows",
        flush=True,
    )
