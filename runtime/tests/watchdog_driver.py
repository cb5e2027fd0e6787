"""A training driver for the watchdog's tests (``test_watchdog.py`` runs it as its own process): Ray Train with two
CPU workers (gloo) that all-reduce once per step and tell the step board, watched by :class:`StepWatchdog`. The
hooks of ``ray_gpu.watchdog`` come from the environment, as in a real job; the board runs on a logical clock (the
``clock`` hook of ``StepWatchdog.start``), so the verdict follows from the steps, not from the machine's speed:

- The clock is a tiny actor (:class:`LogicalClock`) whose seconds pass only when advanced. Rank 0 advances it by
  ``--step-seconds`` per step before it reports the step, and every rank waits until the board holds its report
  before it goes on; so while steps come the board sees at most one step's seconds since the last step, however
  slowly a loaded machine runs them, and a window longer than a step cannot pass.
- Once the steps stopped for good, the driver lets the clock run on. After the step the hang hook names (rank 0
  never takes another), it advances the clock by a step's seconds every 0.1 s until the watchdog ends the process.
  After ``fit()`` returned (the loop said it stopped), it advances the clock by two windows at once and waits until
  the watchdog has read the board twice: the first read saw the whole silence, and the second one happening at all
  shows that the watchdog judged it not a stall (a stall ends this process at once).

Real seconds only pace the driver's polling loops; the test's timeout guards against a hang.

    python watchdog_driver.py --address HOST:PORT --storage DIR --steps 30 --step-seconds 0.5 --planned-window 4
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKLOAD = "watchdog-test"
RUNTIME = Path(__file__).resolve().parents[1]
#: Real seconds between the driver's looks at the board or the clock (pacing only, never a verdict).
PACE_SECONDS = 0.1


class LogicalClock:
    """Seconds that pass only when :meth:`advance` says so; counts how often they were read (a Ray actor)."""

    def __init__(self) -> None:
        self.seconds, self.reads = 0.0, 0

    def now(self) -> float:
        self.reads += 1
        return self.seconds

    def advance(self, seconds: float) -> int:
        """Moves the clock on; returns the reads so far (every later read sees the new time)."""
        self.seconds += seconds
        return self.reads

    def state(self) -> tuple[float, int]:
        return self.seconds, self.reads


@dataclass(frozen=True)
class ClockReader:
    """The board's clock: reads the :class:`LogicalClock` actor (picklable; called inside the board's actor)."""

    clock: Any

    def __call__(self) -> float:
        import ray

        return float(ray.get(self.clock.now.remote()))


def train_loop(cfg: dict[str, Any]) -> None:
    import ray
    import ray.train
    import torch
    import torch.distributed as dist

    reporter, clock = cfg["watchdog"], cfg["clock"]
    rank_0 = ray.train.get_context().get_world_rank() == 0
    # The reporter's own handle: an actor runs one caller's calls in order, so once this synchronous read returns,
    # the board holds every report this worker sent before it.
    board = reporter._board()
    assert board is not None, "the step board is missing"

    def on_the_board() -> None:
        ray.get(board.snapshot.remote())

    reporter.started(0)
    on_the_board()
    for step in range(1, cfg["steps"] + 1):
        dist.all_reduce(torch.ones(1))  # the collective a hung rank leaves the others waiting in
        if rank_0:
            ray.get(clock.advance.remote(cfg["step_seconds"]))  # the step took step_seconds, on the board's clock
        reporter.progress(step)  # the hang hook blocks rank 0 forever here at its step
        on_the_board()
    reporter.stopped(cfg["steps"])
    on_the_board()


def _run_on_after(step: int, board: Any, clock: Any, seconds: float) -> None:
    """Once the board saw ``step`` (the hang hook's: no rank takes another), the clock runs on until the watchdog ends
    this process."""
    import ray

    while (ray.get(board.snapshot.remote()).last_step or 0) < step:
        time.sleep(PACE_SECONDS)
    while True:
        ray.get(clock.advance.remote(seconds))
        time.sleep(PACE_SECONDS)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--storage", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument(
        "--step-seconds", type=float, required=True, help="seconds each step takes on the board's (logical) clock"
    )
    parser.add_argument("--planned-window", type=float, required=True)
    args = parser.parse_args()

    import ray
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    import ray_gpu
    from ray_gpu import watchdog

    ray_gpu.log_to_stdout()
    path = os.pathsep.join([str(RUNTIME), str(RUNTIME / "tests")])
    ray.init(
        address=args.address, logging_level="ERROR", log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": path}}
    )
    clock = ray.remote(num_cpus=0)(LogicalClock).remote()
    window = watchdog.stall_after_seconds(args.planned_window)
    assert window is not None
    hang = watchdog.hang_step()
    with watchdog.StepWatchdog.start(WORKLOAD, window, clock=ClockReader(clock)) as dog:
        board = ray.get_actor(dog.reporter.board, namespace=watchdog.NAMESPACE)
        if hang is not None:
            threading.Thread(target=_run_on_after, args=(hang, board, clock, args.step_seconds), daemon=True).start()
        trainer = TorchTrainer(
            train_loop,
            train_loop_config={
                "steps": args.steps,
                "step_seconds": args.step_seconds,
                "watchdog": dog.reporter,
                "clock": clock,
            },
            torch_config=TorchConfig(backend="gloo"),
            scaling_config=ScalingConfig(num_workers=2, resources_per_worker={"CPU": 0.5}),
            run_config=RunConfig(name="watchdog", storage_path=args.storage),
        )
        trainer.fit()
        # The loop stopped: two windows of silence, then two reads of the board by the watchdog (see above).
        reads = ray.get(clock.advance.remote(2 * window))
        while ray.get(clock.state.remote())[1] < reads + 2:
            time.sleep(PACE_SECONDS)
        seconds = ray.get(clock.state.remote())[0]
    print(f"watchdog driver: finished {json.dumps({'steps': args.steps, 'clock': seconds})}", flush=True)


if __name__ == "__main__":
    main()
