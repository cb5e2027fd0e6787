"""The end-to-end harness's readers, without Ray: the records a job prints (``job_log.py``), the data positions of the
kill-and-resume experiment (``data_positions.py``) and the mid-write kill of the committed-outputs experiment
(``committed_outputs.MidWriteKill``), on logs, folders and a process made here."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from committed_outputs import KILL_AT_PART, MidWriteKill
from data_positions import worker_resumes
from job_log import POSITION_AT_CHECKPOINT, RESUMED_AT_STEP, RESUMED_POSITION, values_in

from ray_gpu import outputs


def test_a_record_is_read_after_its_text_wherever_ray_put_it_on_the_line() -> None:
    lines = [
        "\x1b[36m(RayTrainWorker pid=7)\x1b[0m ray-gpu example: resumed from checkpoint at step 5\n",
        "ray-gpu example: resumed from checkpoint at step 10 [repeated 2x across cluster]\n",
        "ray-gpu example: data position at checkpoint 5\n",
    ]
    assert values_in(lines, RESUMED_AT_STEP) == [5, 10]


def _position(rank: int, step: int, resumed_from: int | None, rows: list[list[int]], batches: int) -> str:
    record = {
        "rank": rank,
        "step": step,
        "resumedFrom": resumed_from,
        "epoch": 0,
        "batchesInEpoch": batches,
        "lastRowIds": [rows[-1][1]],
        "rowsSincePrevious": rows,
    }
    return f"(RayTrainWorker pid=1) {POSITION_AT_CHECKPOINT}{json.dumps(record)}\n"


def _resumed(rank: int, step: int, batch: int, skipped: int, first: int) -> str:
    record = {
        "rank": rank,
        "step": step,
        "epoch": 0,
        "batch": batch,
        "recordedRowIds": [skipped],
        "lastSkippedRowIds": [skipped],
        "firstRowIds": [first],
    }
    return f"{RESUMED_POSITION}{json.dumps(record)}\n"


def test_each_workers_rows_either_side_of_the_checkpoint_it_resumed_from(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    # Two workers, a checkpoint every step; killed after step 1 and resumed from it; rank 1 then retrains its row 3.
    lines = [_position(0, 1, None, [[0, 1]], 2), _position(1, 1, None, [[2, 3]], 2), _position(0, 2, None, [[4, 5]], 4)]
    lines += [_resumed(0, 1, 2, 1, 4), _resumed(1, 1, 2, 3, 3), _resumed(1, 1, 2, 3, 3)]  # Ray printed one line twice
    lines += [_position(0, 2, 1, [[4, 5]], 4), _position(1, 2, 1, [[3, 3], [6, 6]], 4)]
    log.write_text("".join(lines))
    workers = worker_resumes([str(log)], step=1, world_size=2, total_steps=2)
    assert [(w.before, w.after) for w in workers] == [([0, 1], [4, 5]), ([2, 3], [3, 6])]
    assert [(w.saved_at(), w.resumed_at()) for w in workers] == [((0, 2), (0, 2))] * 2
    assert [w.retrained() for w in workers] == [[], [3]]


def test_a_worker_missing_from_the_logs_has_no_position(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    log.write_text(_position(0, 1, None, [[0, 1]], 2))
    workers = worker_resumes([str(log)], step=1, world_size=2, total_steps=2)
    assert [(w.saved is None, w.resumed is None) for w in workers] == [(False, True), (True, True)]


def _staged(root: Path, parts: int) -> Path:
    folder = root / outputs.STAGING_DIR / "run-1"
    folder.mkdir(parents=True)
    for i in range(parts):
        (folder / f"part-{i}.parquet").write_bytes(b"")
    return folder


def test_the_mid_write_kill_records_the_staged_parts_then_kills_the_drivers_group(tmp_path: Path) -> None:
    folder = _staged(tmp_path, KILL_AT_PART)
    driver = subprocess.Popen(["sleep", "600"], text=True, start_new_session=True)
    kill = MidWriteKill(str(tmp_path))
    kill.on_line("the driver's first line", driver)
    kill.on_line("a later line starts no second watcher", driver)
    assert (kill.settled().folder, kill.parts, kill.run_id) == (str(folder), KILL_AT_PART, "run-1")
    assert driver.wait() == -signal.SIGKILL


def test_a_driver_that_ends_before_the_parts_are_staged_is_not_killed(tmp_path: Path) -> None:
    _staged(tmp_path, KILL_AT_PART - 1)
    driver = subprocess.Popen(["true"], text=True, start_new_session=True)
    kill = MidWriteKill(str(tmp_path))
    kill.on_line("", driver)
    assert (kill.settled().folder, kill.parts, driver.wait()) == (None, 0, 0)
