"""A training driver for the watchdog's tests (``test_watchdog.py`` runs it as its own process): Ray Train with two
CPU workers (gloo) that all-reduce once per step and tell the step board, watched by :class:`StepWatchdog`. The
hooks of ``ray_gpu.watchdog`` come from the environment, as in a real job.

    python watchdog_driver.py --address HOST:PORT --storage DIR --steps 30 --step-seconds 0.5 --planned-window 10
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

WORKLOAD = "watchdog-test"
RUNTIME = Path(__file__).resolve().parents[1]


def train_loop(cfg: dict[str, Any]) -> None:
    import time

    import torch
    import torch.distributed as dist

    reporter = cfg["watchdog"]
    reporter.started(0)
    for step in range(1, cfg["steps"] + 1):
        dist.all_reduce(torch.ones(1))  # the collective a hung rank leaves the others waiting in
        time.sleep(cfg["step_seconds"])
        reporter.progress(step)
    reporter.stopped(cfg["steps"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", required=True)
    parser.add_argument("--storage", required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--step-seconds", type=float, required=True)
    parser.add_argument("--planned-window", type=float, required=True)
    args = parser.parse_args()

    import ray
    from ray.train import RunConfig, ScalingConfig
    from ray.train.torch import TorchConfig, TorchTrainer

    import ray_gpu
    from ray_gpu import watchdog

    ray_gpu.log_to_stdout()
    path = os.pathsep.join([str(RUNTIME), str(RUNTIME / "tests")])
    ray.init(address=args.address, logging_level="ERROR", log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    with watchdog.StepWatchdog.start(WORKLOAD, watchdog.stall_after_seconds(args.planned_window)) as dog:
        trainer = TorchTrainer(
            train_loop,
            train_loop_config={"steps": args.steps, "step_seconds": args.step_seconds, "watchdog": dog.reporter},
            torch_config=TorchConfig(backend="gloo"),
            scaling_config=ScalingConfig(num_workers=2, resources_per_worker={"CPU": 0.5}),
            run_config=RunConfig(name="watchdog", storage_path=args.storage),
        )
        trainer.fit()
    print(f"watchdog driver: finished {json.dumps({'steps': args.steps})}", flush=True)


if __name__ == "__main__":
    main()
