"""A watchdog that fails a training job whose steps stopped. A hung NCCL collective keeps the GPUs at 100% utilization
while no step progresses, and the job would hold them until its deadline; the watchdog ends it instead.

The training workers tell a step board (a tiny Ray actor, no CPUs, on the driver's node) about their progress: one
fire-and-forget call per optimizer step, and one when a worker (re)starts its loop, so Ray Train restarting the
worker group after a failure or a spot preemption restarts the clock. A thread of the driver reads the board every
few seconds. Once the first step arrived, a stretch of ``stall_after_seconds`` without any step (the plan's
``train.stallAfterSeconds``) makes it print one ``ray-gpu watchdog:`` line and end the driver with
:data:`STALLED_EXIT_STATUS`: the RayJob fails, KubeRay deletes its cluster and Kueue admits the next job. Before the
first step it watches nothing (start-up, image pulls and node scale-up are Kueue's ``waitForPodsReady`` and the
pre-running deadline's)::

    with StepWatchdog.start(tuning.name, stall_after_seconds(planned)) as dog:      # the driver
        trainer = TorchTrainer(loop, train_loop_config={..., "watchdog": dog.reporter}, ...)
        result = trainer.fit()

    reporter = cfg["watchdog"]                                                       # each worker
    reporter.started(step)               # at the start of the loop (after a resume: the checkpoint's step)
    ...
    reporter.progress(step)              # after each optimizer step
    reporter.stopped(step)               # after the loop, or before a planned wait: not a stall

Two hooks of the end-to-end tests, read by the driver (Ray Train's workers do not see its environment) and carried
to the workers by the reporter; never set in a real job, each logs a warning when it acts:

- :data:`STALL_AFTER_ENV` (``RAY_GPU_TEST_STALL_AFTER_SECONDS=S``): replaces the planned window with ``S`` seconds.
- :data:`HANG_AT_STEP_ENV` (``RAY_GPU_TEST_HANG_AT_STEP=N``): the rank-0 worker blocks forever once it reported
  step ``N``, as a hung collective would; the other ranks then block in their next collective.

A third hook, a parameter rather than a variable: ``StepWatchdog.start(..., clock=c)`` gives the board the clock
``c`` (a picklable callable returning seconds, run inside the board's actor) instead of ``time.monotonic``. The
watchdog's tests hand it a logical clock their driver advances by its step count, so whether a job counts as
stalled follows from its steps, not from how fast a loaded machine runs them (``tests/watchdog_driver.py``). Only
the board's clock changes: the driver still reads the board every few (real) seconds.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .interruptions import positive_count

log = logging.getLogger("ray_gpu")

#: The driver's exit status when the watchdog ends it (Ray reports it: "Job entrypoint command failed with exit code 86").
STALLED_EXIT_STATUS = 86
LOG_PREFIX = "ray-gpu watchdog: "
STALL_AFTER_ENV = "RAY_GPU_TEST_STALL_AFTER_SECONDS"
HANG_AT_STEP_ENV = "RAY_GPU_TEST_HANG_AT_STEP"
#: The namespace of the step boards: the workers find theirs by name from any job namespace.
NAMESPACE = "ray-gpu"
#: The driver reads the board this often at most (more often for windows under 20 seconds: a quarter of the window).
POLL_SECONDS = 5.0


def is_stalled(last_event_at: float | None, now: float, window: float) -> bool:
    """Whether the steps stopped: ``last_event_at`` (None while nothing is watched: before the first step, after
    a loop stopped) is ``window`` seconds or more before ``now``, both on the board's clock."""
    return last_event_at is not None and now - last_event_at >= window


def stall_message(workload: str, last_step: int | None, seconds: float, window: float) -> str:
    """The line the watchdog prints before it ends the driver."""
    return (
        f"{LOG_PREFIX}{workload}: no training step for {seconds:.0f}s since step {last_step} (window {window:g}s); "
        f"failing the job (exit status {STALLED_EXIT_STATUS}) so KubeRay deletes its cluster and Kueue can admit the next job"
    )


def stall_after_seconds(planned: float | None) -> float | None:
    """The window, read where the job starts: the plan's ``train.stallAfterSeconds`` (None: no watchdog), or the
    test hook :data:`STALL_AFTER_ENV` when it is set."""
    value = os.environ.get(STALL_AFTER_ENV)
    if not value:
        return planned
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError(f"{STALL_AFTER_ENV}={value!r}: expected a positive number of seconds (a test hook)")
    log.warning(
        "%s=%s: test hook, the watchdog's window is %gs instead of the planned %s",
        STALL_AFTER_ENV,
        value,
        seconds,
        planned,
    )
    return seconds


def hang_step() -> int | None:
    """The step :data:`HANG_AT_STEP_ENV` names, read where the job starts; the reporter carries it to the workers."""
    return positive_count(HANG_AT_STEP_ENV)


@dataclass(frozen=True)
class Snapshot:
    """What the board knows, on its own clock: the last step reported and when the last event came (None while
    nothing is watched)."""

    last_step: int | None
    last_event_at: float | None
    now: float


class StepBoard:
    """The board's state: a step arms it, a (re)started loop restarts the clock, a stopped loop disarms it until
    the next step. Runs as a Ray actor (:meth:`StepWatchdog.start`); plain Python, so tests drive it with a clock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_step: int | None = None
        self.last_event_at: float | None = None

    def progress(self, step: int) -> None:
        self.last_step, self.last_event_at = step, self.clock()

    def started(self, step: int) -> None:
        self.last_step = step
        if self.last_event_at is not None:
            self.last_event_at = self.clock()

    def stopped(self, step: int) -> None:
        self.last_step, self.last_event_at = step, None

    def snapshot(self) -> Snapshot:
        return Snapshot(self.last_step, self.last_event_at, self.clock())


@dataclass
class StepReporter:
    """The workers' side: small and picklable (pass it in ``train_loop_config``); finds the board by name inside
    the worker on first use. Every call is fire-and-forget and never fails the loop. ``board`` None: no watchdog,
    every call does nothing."""

    board: str | None
    hang_at_step: int | None = None
    _handle: Any = field(default=None, init=False, repr=False, compare=False)
    _lookup_failed: bool = field(default=False, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {"board": self.board, "hang_at_step": self.hang_at_step}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.board, self.hang_at_step, self._handle, self._lookup_failed = (
            state["board"],
            state["hang_at_step"],
            None,
            False,
        )

    def progress(self, step: int) -> None:
        """Tells the board that optimizer step ``step`` is done (then blocks forever when the hang hook names it)."""
        self._tell("progress", step)
        if self.hang_at_step is not None and step == self.hang_at_step:
            _hang(step)

    def started(self, step: int) -> None:
        """Tells the board that this worker's loop (re)starts at ``step``."""
        self._tell("started", step)

    def stopped(self, step: int) -> None:
        """Tells the board that this worker's loop stopped at ``step`` on purpose (the run's end, or the wait for a
        restart after a spot interruption's checkpoint): nothing is watched until the next step."""
        self._tell("stopped", step)

    def _tell(self, method: str, step: int) -> None:
        handle = self._board()
        if handle is not None:
            getattr(handle, method).options(num_returns=0).remote(step)

    def _board(self) -> Any:
        if self._handle is None and self.board is not None and not self._lookup_failed:
            import ray

            try:
                self._handle = ray.get_actor(self.board, namespace=NAMESPACE)
            except Exception as e:
                self._lookup_failed = True
                log.warning("watchdog: no step board %r (%s); this worker's steps are not watched", self.board, e)
        return self._handle


def _hang(step: int) -> None:
    import ray.train

    if ray.train.get_context().get_world_rank() != 0:
        return
    log.warning(
        "%s=%d: test hook, rank 0 blocks forever after step %d, as a hung collective would",
        HANG_AT_STEP_ENV,
        step,
        step,
    )
    threading.Event().wait()


class StepWatchdog:
    """The driver's side: the board and the thread that reads it. A context manager around ``trainer.fit()``."""

    def __init__(
        self, workload: str, window: float | None, board: Any, reporter: StepReporter, poll_seconds: float
    ) -> None:
        self.workload, self.window, self.reporter, self.poll_seconds = workload, window, reporter, poll_seconds
        self._board = board
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @classmethod
    def start(
        cls,
        workload: str,
        stall_after_seconds: float | None,
        hang_at_step: int | None = None,
        clock: Callable[[], float] | None = None,
    ) -> StepWatchdog:
        """Creates the board on this (the driver's) node and starts watching it. Without ``stall_after_seconds``, no
        watchdog (a plan without ``train.stallAfterSeconds``), and the reporter does nothing. ``hang_at_step``: the
        hang hook (default: :func:`hang_step`). ``clock``: the board's clock, a test hook (default: ``time.monotonic``
        on the board's node; see the module's docstring)."""
        hang = hang_step() if hang_at_step is None else hang_at_step
        if stall_after_seconds is None:
            log.info("watchdog: %s: off (no train.stallAfterSeconds in the plan)", workload)
            return cls(workload, None, None, StepReporter(None, hang), POLL_SECONDS)
        if not stall_after_seconds > 0:
            raise ValueError(f"stall_after_seconds: expected a positive number of seconds, got {stall_after_seconds!r}")
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        if not ray.is_initialized():
            ray.init()
        context = ray.get_runtime_context()
        name = f"ray-gpu-watchdog-{workload}-{context.get_job_id()}-{uuid.uuid4().hex[:8]}"
        # On the driver's node: a lost GPU node does not take the board with it.
        here = NodeAffinitySchedulingStrategy(node_id=context.get_node_id(), soft=False)
        if clock is not None:
            log.warning(
                "watchdog: %s: test hook, the step board runs on the clock %r instead of time.monotonic",
                workload,
                clock,
            )
        board_args = () if clock is None else (clock,)
        board = (
            ray.remote(num_cpus=0)(StepBoard)
            .options(name=name, namespace=NAMESPACE, scheduling_strategy=here)
            .remote(*board_args)
        )
        dog = cls(
            workload,
            stall_after_seconds,
            board,
            StepReporter(name, hang),
            min(POLL_SECONDS, max(0.25, stall_after_seconds / 4)),
        )
        dog._thread = threading.Thread(target=dog._watch, name="ray-gpu-watchdog", daemon=True)
        dog._thread.start()
        log.info(
            "watchdog: %s: fails the job after %gs without a training step (board %s)",
            workload,
            stall_after_seconds,
            name,
        )
        return dog

    def _watch(self) -> None:
        import ray
        from ray.exceptions import GetTimeoutError

        assert self.window is not None
        while not self._stop.wait(self.poll_seconds):
            try:
                snap: Snapshot = ray.get(self._board.snapshot.remote(), timeout=max(30.0, self.poll_seconds))
            except GetTimeoutError:
                continue
            except Exception as e:
                if not self._stop.is_set():
                    log.warning(
                        "watchdog: %s: the step board is gone (%s); steps are no longer watched", self.workload, e
                    )
                return
            if is_stalled(snap.last_event_at, snap.now, self.window) and not self._stop.is_set():
                assert snap.last_event_at is not None
                print(
                    stall_message(self.workload, snap.last_step, snap.now - snap.last_event_at, self.window), flush=True
                )
                sys.stderr.flush()
                os._exit(STALLED_EXIT_STATUS)

    def stop(self) -> None:
        """Stops watching and removes the board (the run finished or failed on its own)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=60)
        if self._board is not None:
            import ray

            if ray.is_initialized():
                ray.kill(self._board)
            self._board = None

    def __enter__(self) -> StepWatchdog:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
