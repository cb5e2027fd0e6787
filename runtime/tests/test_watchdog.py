"""The watchdog that fails a training job whose steps stopped: the stall decision and the board's state as plain
Python, then real Ray Train drivers (``watchdog_driver.py``, each its own process on the session's small Ray: workers,
reporter, named board actor, the driver's watch thread and its exit): one whose rank 0 hangs at a step (the test
hook) is ended with the watchdog's exit status, one whose steps keep coming finishes normally. The drivers' board
runs on a logical clock their steps advance (the ``clock`` hook of ``StepWatchdog.start``), so each verdict is
decided by the steps, whatever the machine's load. Timeouts here only guard against a hang; nothing asserts how
long anything took."""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ray_gpu.watchdog import (
    HANG_AT_STEP_ENV,
    LOG_PREFIX,
    STALL_AFTER_ENV,
    STALLED_EXIT_STATUS,
    Snapshot,
    StepBoard,
    StepReporter,
    hang_step,
    is_stalled,
    stall_after_seconds,
    stall_message,
)

DRIVER = Path(__file__).with_name("watchdog_driver.py")
RUNTIME = DRIVER.parents[1]
HANG_GUARD_SECONDS = 600


# ---- the decision, the board and the hooks (no Ray, no sleeping) ----------------------------------------------
@pytest.mark.parametrize(
    ("last_event_at", "now", "window", "stalled"),
    [
        (None, 1e9, 60.0, False),  # nothing watched: before the first step, or after a loop stopped
        (100.0, 100.0, 60.0, False),
        (100.0, 159.9, 60.0, False),
        (100.0, 160.0, 60.0, True),
        (100.0, 4000.0, 60.0, True),
    ],
)
def test_the_steps_stopped_once_a_whole_window_passed_since_the_last_event(last_event_at, now, window, stalled) -> None:
    assert is_stalled(last_event_at, now, window) is stalled


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_board_watches_from_the_first_step_until_a_loop_stops() -> None:
    clock = _Clock()
    board = StepBoard(clock)
    board.started(0)
    clock.now = 500.0
    assert board.snapshot() == Snapshot(0, None, 500.0), "start-up is not watched"
    board.progress(1)
    clock.now = 530.0
    board.progress(2)
    clock.now = 545.0
    snap = board.snapshot()
    assert (snap.last_step, snap.last_event_at, snap.now) == (2, 530.0, 545.0)
    board.stopped(2)
    assert board.snapshot().last_event_at is None


def test_a_restarted_loop_restarts_the_clock_at_its_checkpoint_step() -> None:
    clock = _Clock()
    board = StepBoard(clock)
    board.progress(7)
    clock.now = 900.0  # the worker group failed and Ray Train restarted it from the checkpoint of step 5
    board.started(5)
    snap = board.snapshot()
    assert (snap.last_step, snap.last_event_at) == (5, 900.0)


def test_the_message_names_the_workload_the_step_the_silence_and_the_window() -> None:
    assert stall_message("llm-pretrain", 1200, 312.4, 300.0) == (
        "ray-gpu watchdog: llm-pretrain: no training step for 312s since step 1200 (window 300s); "
        "failing the job (exit status 86) so KubeRay deletes its cluster and Kueue can admit the next job"
    )


def test_the_hooks_are_read_from_the_environment(monkeypatch, stdout_log, capsys) -> None:
    assert (stall_after_seconds(600.0), stall_after_seconds(None), hang_step()) == (600.0, None, None)
    monkeypatch.setenv(STALL_AFTER_ENV, "7.5")
    monkeypatch.setenv(HANG_AT_STEP_ENV, "3")
    assert (stall_after_seconds(600.0), hang_step()) == (7.5, 3)
    assert (
        f"{STALL_AFTER_ENV}=7.5: test hook, the watchdog's window is 7.5s instead of the planned 600.0"
        in capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [(STALL_AFTER_ENV, "0"), (STALL_AFTER_ENV, "soon"), (HANG_AT_STEP_ENV, "0"), (HANG_AT_STEP_ENV, "-2")],
)
def test_a_malformed_hook_is_refused(monkeypatch, name, value) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"^{name}="):
        stall_after_seconds(60.0) if name == STALL_AFTER_ENV else hang_step()


def test_the_reporter_travels_without_its_handle_and_without_a_board_does_nothing() -> None:
    reporter = StepReporter("ray-gpu-watchdog-x", hang_at_step=4)
    reporter._handle = object()  # a resolved handle stays in the process that resolved it
    copy = pickle.loads(pickle.dumps(reporter))
    assert (copy.board, copy.hang_at_step, copy._handle) == ("ray-gpu-watchdog-x", 4, None)
    off = StepReporter(None)  # no watchdog: every call does nothing, without Ray
    off.started(0)
    off.progress(1)
    off.stopped(1)


# ---- real Ray Train drivers -------------------------------------------------------------------------------------
def _drive(
    ray_local, tmp_path: Path, hooks: dict[str, str], steps: int, step_seconds: float, planned_window: float
) -> subprocess.CompletedProcess[str]:
    address = ray_local.get_runtime_context().gcs_address
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(RUNTIME), str(RUNTIME / "tests")]), **hooks}
    command = [
        sys.executable,
        str(DRIVER),
        "--address",
        address,
        "--storage",
        str(tmp_path / "storage"),
        "--steps",
        str(steps),
    ]
    command += ["--step-seconds", str(step_seconds), "--planned-window", str(planned_window)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS, check=False)


def test_a_job_whose_rank_0_hangs_is_ended_by_the_watchdog(ray_local, tmp_path: Path) -> None:
    """Rank 0 hangs after step 3 (the hook), rank 1 then waits in its next all-reduce. Steps 1 to 3 each take half a
    logical second and the board holds each report before the next step, so the 5 s window cannot pass before step
    3, however slow the machine; after it the driver lets the clock run on, so it must pass. Decided: exit status 86,
    one watchdog line naming step 3 and a silence of at least the window, and the driver never gets to finish."""
    # Steps without end: only the watchdog ends this driver.
    run = _drive(
        ray_local,
        tmp_path,
        {STALL_AFTER_ENV: "5", HANG_AT_STEP_ENV: "3"},
        steps=1_000_000,
        step_seconds=0.5,
        planned_window=3600,
    )
    output = run.stdout + run.stderr
    assert run.returncode == STALLED_EXIT_STATUS, output
    lines = [line for line in run.stdout.splitlines() if line.startswith(LOG_PREFIX)]
    assert len(lines) == 1, output
    match = re.fullmatch(
        rf"{LOG_PREFIX}watchdog-test: no training step for (\d+)s since step 3 \(window 5s\); failing the job .*",
        lines[0],
    )
    assert match is not None, lines[0]
    assert int(match[1]) >= 5, lines[0]
    assert "watchdog driver: finished" not in output


def test_a_job_whose_steps_keep_coming_finishes(ray_local, tmp_path: Path) -> None:
    """30 steps of half a logical second: the run lasts 15 s on the board's clock, nearly four 4 s windows, and each
    step comes one step's seconds after the last (the board holds each report before the next step). After the
    loop said it stopped, the driver adds two windows of silence and waits for two reads of the board by the
    watchdog: a board that still watched the finished run would be judged stalled there. Decided: exit status 0, no
    watchdog line, and the clock the driver reports is 30 steps plus the silence (30 x 0.5 + 2 x 4 = 23 s)."""
    run = _drive(ray_local, tmp_path, {}, steps=30, step_seconds=0.5, planned_window=4)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert LOG_PREFIX not in output
    assert 'watchdog driver: finished {"steps": 30, "clock": 23.0}' in run.stdout, output
